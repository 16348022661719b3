#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Weft with several knob settings and MPICH 5.0.2 across two namespace hosts
# (one rank each), one weft-bench benchmark, the variants alternating in
# every round (order reversed every other round). One line per size:
#   ROUND VARIANT SIZE VALUE
# As root, from the repository, after `make install` and `weft-bench compare
# --peer mpich` once:
#   bench/netmod/netns_variants.sh BENCH "ARGS" ROUNDS VARIANT...
# VARIANT: base (Weft's defaults), K=V[,K=V] (Weft with those settings), or
# mpich (UCX over TCP, as in netns_compare.sh). e.g.
#   bench/netmod/netns_variants.sh latency "-m 0:1048576" 3 base WEFT_OFI_PROVIDER=net mpich > lat.txt
#   python3 bench/netmod/variants_summary.py lat.txt     (median [min-max] per variant)
set -e
B=$1; ARGS=$2; R=$3; shift 3
NS=tests/netmod/netns_hosts.sh
M=${WEFT_BENCH_CACHE:-$HOME/.cache/weft-bench}/venv-mpich
export PER_HOST=1
$NS down >/dev/null 2>&1 || true
$NS up 2 >/dev/null
trap '$NS down >/dev/null 2>&1' EXIT INT TERM
for r in $(seq "$R"); do
    vs=("$@")
    if [ $((r % 2)) -eq 0 ]; then vs=($(printf '%s\n' "$@" | tac)); fi
    for v in "${vs[@]}"; do
        if [ "$v" = mpich ]; then
            out=$(MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 LD_LIBRARY_PATH=$M/lib \
                timeout 300 "$M/bin/mpiexec" -bind-to core -n 2 $NS exec install/libexec/weft-bench/$B $ARGS 2>&1)
        else
            e=""; [ "$v" != base ] && e=$(echo "$v" | tr ',' ' ')
            out=$(env $e WEFT_TEST_HOST_BLOCK=1 timeout 300 install/bin/mpirun -n 2 $NS exec \
                install/libexec/weft-bench/$B $ARGS 2>&1)
        fi
        echo "$out" | awk -v v="$v" -v r="$r" '/^[0-9]/{print r, v, $1, $2}'
    done
done
