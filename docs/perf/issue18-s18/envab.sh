#!/bin/sh
# envab.sh BENCHES SIZES ROUNDS CFG... : alternating rounds of this install under each env setting (X=1: default)
benches=$1; m=$2; rounds=$3; shift 3
for r in $(seq "$rounds"); do
  for cfg in "$@"; do
    for b in $(echo "$benches" | tr ',' ' '); do
      env $cfg install/bin/mpirun -n 2 install/libexec/weft-bench/$b -m "$m" | grep -v '^#' | awk -v v="$cfg" -v b=$b '{print v, b, $1, $2}'
    done
  done
done
