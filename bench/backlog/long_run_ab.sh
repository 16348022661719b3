#!/bin/sh
# Long back-to-back runs of one benchmark on several Weft installs, taken
# in turn (round 1: every install, round 2: every install, ...), each
# rank under /usr/bin/time so the largest resident set of the job is
# reported with the times. For what grows with the run's length (an
# unexpected-message backlog, a heap that is trimmed and faulted back),
# which weft-bench's default iteration counts do not show.
#
#   bench/backlog/long_run_ab.sh ROUNDS NP "BENCH ARGS" LABEL=PREFIX[:K=V,...] ...
#   bench/backlog/long_run_ab.sh 3 4 "gather -m 32768:65536 -B -i 20000" \
#       before=/work/wt-base/install now=$PWD/install
#
# Output: one line per run: round, label, size:us pairs, max RSS (KiB).
set -eu
rounds=$1 np=$2 args=$3
shift 3
r=1
while [ "$r" -le "$rounds" ]; do
    for side in "$@"; do
        label=${side%%=*}
        rest=${side#*=}
        prefix=${rest%%:*}
        envs=""
        [ "$prefix" != "$rest" ] && envs=${rest#*:}
        genv=""
        if [ -n "$envs" ]; then
            for kv in $(echo "$envs" | tr ',' ' '); do
                genv="$genv -genv ${kv%%=*} ${kv#*=}"
            done
        fi
        bench=${args%% *}
        bargs=${args#"$bench"}
        # shellcheck disable=SC2086
        out=$("$prefix/bin/mpirun" -n "$np" $genv /usr/bin/time -f "RSS %M" \
              "$prefix/libexec/weft-bench/$bench" $bargs 2>&1) || true
        rows=$(echo "$out" | awk '/^ *[0-9]+ +[0-9.]+/ {printf "%s:%s ", $1, $2}')
        rss=$(echo "$out" | awk '/^RSS/ {print $2}' | sort -n | tail -1)
        echo "$r $label $rows maxrss_kib ${rss:-?}"
    done
    r=$((r + 1))
done
