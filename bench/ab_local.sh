#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Alternating A/B of Weft builds or settings on one node: one weft-bench
# benchmark, every variant once per round, the order reversed every other
# round (so load drifts hit every variant alike). The intra-node counterpart
# of bench/netmod/netns_ab.sh, with the same output (summarise with
# bench/netmod/ab_summary.py). From the repository:
#   bench/ab_local.sh BENCH SIZES ROUNDS NP LABEL=INSTALL[:K=V,K=V] ...
# (AB_ARGS: more benchmark arguments, e.g. AB_ARGS=-B for back-to-back calls)
# e.g.
#   bench/ab_local.sh bw 8192:4194304 3 2 main=install nocoop=install:WEFT_SMP_COOP_THRESHOLD=1g
[ $# -ge 5 ] || { sed -n 3,12p "$0"; exit 2; }
b=$1; m=$2; rounds=$3; np=$4; shift 4
. "$(dirname "$0")/ab_rounds.sh"

run() {
    ab_spec "$1"
    echo "### $label $b round $2"
    env $envs "$inst/bin/mpirun" -n "$np" "$inst/libexec/weft-bench/$b" -m "$m" $AB_ARGS | grep -v '^#'
}
ab_rounds "$rounds" run "$@"
