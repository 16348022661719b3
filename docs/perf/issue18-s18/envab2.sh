#!/bin/sh
# envab2.sh NP BENCHES SIZES ROUNDS CFG... (bench args via EXTRA)
np=$1; benches=$2; m=$3; rounds=$4; shift 4
for r in $(seq "$rounds"); do
  for cfg in "$@"; do
    for b in $(echo "$benches" | tr ',' ' '); do
      env $cfg install/bin/mpirun -n $np install/libexec/weft-bench/$b -m "$m" $EXTRA | grep -v '^#' | awk -v v="$cfg" -v b=$b '{print v, b, $1, $2}'
    done
  done
done
