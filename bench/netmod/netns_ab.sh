#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A/B of Weft installs or knob settings across two namespace hosts (one rank
# each, tcp;ofi_rxm), one weft-bench benchmark, rounds interleaved (order
# reversed every other round, so load drifts hit every variant alike).
# As root, from the repository:
#   bench/netmod/netns_ab.sh BENCH SIZES ROUNDS LABEL=INSTALL[:K=V,K=V]|mpich|openmpi ...
# mpich: pip MPICH 5.0.2 (UCX over TCP) on the same binary, as in
# netns_compare.sh (after `weft-bench compare --peer mpich` once).
# openmpi: pip Open MPI 5.0.11 (ob1, TCP BTL) on its own build of the
# benchmarks (after `weft-bench compare --peer openmpi` once), a daemon per
# namespace host started by bench/netmod/ompi_netns_agent.sh. e.g.
#   bench/netmod/netns_ab.sh latency 32768:65536 6 frag=install \
#       rndv=install:WEFT_NET_FRAG_MAX=0 main=/work/main/install > ab.txt
#   bench/netmod/netns_ab.sh latency 0:1048576 3 rxm=install net=install:WEFT_OFI_PROVIDER=net mpich
#   bench/netmod/ab_summary.py ab.txt      (min and median per variant)
# The benchmarks' RUNPATH names the install they were built for: to measure
# another install's library, give it, e.g.
#   old=/tmp/old-install:LD_LIBRARY_PATH=/tmp/old-install/lib
# Namespaces nmh1/nmh2 (NS_TAG=nm, 10.77.31.x), apart from netns_compare.sh's.
set -e
NS=tests/netmod/netns_hosts.sh
export NS_TAG=nm NS_NET=31 PER_HOST=1
C=${WEFT_BENCH_CACHE:-$HOME/.cache/weft-bench}
M=$C/venv-mpich
H=$(mktemp)
printf '10.77.31.1\n10.77.31.2\n' > "$H"
[ $# -ge 4 ] || { sed -n 2,19p "$0"; exit 2; }
b=$1; m=$2; rounds=$3; shift 3
$NS down >/dev/null 2>&1 || true
$NS up 2
trap '$NS down; rm -f "$H"' EXIT INT TERM
. "$(dirname "$0")/../ab_rounds.sh"

run() {
    spec=$1; r=$2
    if [ "$spec" = mpich ]; then
        echo "### mpich $b round $r"
        MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 LD_LIBRARY_PATH=$M/lib \
            "$M/bin/mpiexec" -bind-to core -n 2 $NS exec install/libexec/weft-bench/$b -m "$m" | grep -v '^#'
        return
    fi
    if [ "$spec" = openmpi ]; then
        echo "### openmpi $b round $r"
        ip netns exec nmh1 taskset -c 0 unshare --uts sh -c "hostname nmh1; \
            $C/venv-openmpi/bin/mpirun --allow-run-as-root -n 2 --hostfile $H --map-by node \
            --bind-to none --mca plm_rsh_agent $PWD/bench/netmod/ompi_netns_agent.sh \
            --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include eth0 \
            --mca oob_tcp_if_include eth0 $C/build-openmpi/libexec/weft-bench/$b -m $m" | grep -v '^#'
        return
    fi
    ab_spec "$spec"
    echo "### $label $b round $r"
    env $envs WEFT_TEST_HOST_BLOCK=1 "$inst/bin/mpirun" -n 2 $NS exec \
        "$inst/libexec/weft-bench/$b" -m "$m" | grep -v '^#'
}
ab_rounds "$rounds" run "$@"
