#!/bin/sh
cd "$(dirname "$0")/../../.."
B=install/libexec/weft-bench
for round in 1 2; do
 for mode in osu b2b; do
  F=""; [ $mode = b2b ] && F="-B"
  for c in gather:linear gather:shm scatter:linear scatter:shm scatter:binomial alltoall:linear alltoall:pairwise alltoall:shm; do
    coll=${c%%:*}; alg=${c#*:}; U=$(echo $coll | tr a-z A-Z)
    echo "### $mode-$alg $coll round $round"
    env WEFT_${U}_ALGORITHM=$alg timeout 300 install/bin/mpirun -n 8 $B/$coll -m 16384:262144 $F 2>&1 | grep -v '^#'
  done
 done
done
