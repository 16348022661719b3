#!/bin/sh
cd "$(dirname "$0")/../../.."
B=install/libexec/weft-bench
for round in 1 2 3 4; do
 for np in 8 4; do
 for mode in osu b2b; do
  F=""; [ $mode = b2b ] && F="-B"
  list="linear shm"; [ $((round % 2)) -eq 0 ] && list="shm linear"
  for alg in $list; do
    echo "### np$np-$mode-$alg gather round $round"
    env WEFT_GATHER_ALGORITHM=$alg timeout 300 install/bin/mpirun -n $np $B/gather -m 16384:65536 $F 2>&1 | grep -v '^#'
  done
 done
 done
done
