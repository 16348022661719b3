#!/bin/sh
# collab.sh NP BENCH SIZES ROUNDS [extra bench args] : variants via V="label=ENV,... label2=..." plus openmpi
cd "$(git rev-parse --show-toplevel)"
np=$1; b=$2; m=$3; rounds=$4; shift 4
O=$HOME/.cache/weft-bench
for r in $(seq $rounds); do
  for spec in $V openmpi; do
    echo "### ${spec%%=*} round $r"
    if [ "$spec" = openmpi ]; then
      $O/venv-openmpi/bin/mpirun --allow-run-as-root --oversubscribe -n $np $( [ $np -le 2 ] && echo --bind-to core || echo --bind-to none ) $O/build-openmpi/libexec/weft-bench/$b -m $m --json ${OUT:-/tmp/s16}/j.json "$@" >/dev/null; python3 docs/perf/issue18-sweep-s16/j2t.py ${OUT:-/tmp/s16}/j.json 2>/dev/null
    else
      envs=$(echo "${spec#*=}" | tr ',' ' ')
      env $envs install/bin/mpirun -n $np install/libexec/weft-bench/$b -m $m --json ${OUT:-/tmp/s16}/j.json "$@" >/dev/null; python3 docs/perf/issue18-sweep-s16/j2t.py ${OUT:-/tmp/s16}/j.json
    fi | grep -v '^#'
  done
done
