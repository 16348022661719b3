#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# A/B of Weft installs or knob settings across two namespace hosts (one rank
# each, tcp;ofi_rxm), one weft-bench benchmark, rounds interleaved (order
# reversed every other round, so load drifts hit every variant alike).
# As root, from the repository:
#   bench/netmod/netns_ab.sh BENCH SIZES ROUNDS LABEL=INSTALL[:K=V,K=V] ...
# e.g.
#   bench/netmod/netns_ab.sh latency 32768:65536 6 frag=install \
#       rndv=install:WEFT_NET_FRAG_MAX=0 main=/work/main/install > ab.txt
#   bench/netmod/ab_summary.py ab.txt      (min and median per variant)
# Namespaces nmh1/nmh2 (NS_TAG=nm, 10.77.31.x), apart from netns_compare.sh's.
set -e
NS=tests/netmod/netns_hosts.sh
export NS_TAG=nm NS_NET=31 PER_HOST=1
[ $# -ge 4 ] || { sed -n 2,13p "$0"; exit 2; }
b=$1; m=$2; rounds=$3; shift 3
$NS down >/dev/null 2>&1 || true
$NS up 2
trap '$NS down' EXIT INT TERM
r=1
while [ "$r" -le "$rounds" ]; do
    list="$*"
    if [ $((r % 2)) -eq 0 ]; then
        list=$(echo "$list" | tr ' ' '\n' | tac | tr '\n' ' ')
    fi
    for spec in $list; do
        label=${spec%%=*}; rest=${spec#*=}; inst=${rest%%:*}; envs=""
        case "$rest" in *:*) envs=$(echo "${rest#*:}" | tr ',' ' ') ;; esac
        echo "### $label $b round $r"
        env $envs WEFT_TEST_HOST_BLOCK=1 "$inst/bin/mpirun" -n 2 $NS exec \
            "$inst/libexec/weft-bench/$b" -m "$m" | grep -v '^#'
    done
    r=$((r + 1))
done
