# SPDX-License-Identifier: BSD-3-Clause
# Sourced by the alternating A/B scripts (bench/ab_local.sh,
# bench/netmod/netns_ab.sh): the rounds and the variant specs.

# ab_rounds ROUNDS RUN SPEC...: "RUN SPEC ROUND" for every spec in every
# round, the order reversed every other round (so load drifts hit every
# variant alike).
ab_rounds() {
    _rounds=$1; _run=$2; shift 2
    _r=1
    while [ "$_r" -le "$_rounds" ]; do
        _list="$*"
        if [ $((_r % 2)) -eq 0 ]; then
            _list=$(echo "$_list" | tr ' ' '\n' | tac | tr '\n' ' ')
        fi
        for _spec in $_list; do
            "$_run" "$_spec" "$_r"
        done
        _r=$((_r + 1))
    done
}

# ab_spec LABEL=INSTALL[:K=V,K=V]: sets label, inst and envs ("K=V K=V").
ab_spec() {
    label=${1%%=*}; _rest=${1#*=}; inst=${_rest%%:*}; envs=""
    case "$_rest" in *:*) envs=$(echo "${_rest#*:}" | tr ',' ' ') ;; esac
}
