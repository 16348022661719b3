#!/bin/sh
cd "$(git rev-parse --show-toplevel)"
B=barrier,allgather,allgatherv,allreduce,alltoall,alltoallv,bcast,gather,gatherv,reduce,reduce_scatter,reduce_scatter_block,scatter,scatterv
for np in 2 4 8; do
  install/bin/weft-bench compare --peer openmpi --rounds 2 -n $np --no-plot --out-dir ${OUT:-/tmp/s16}/sw-np$np-osu --bench $B -- -m 4:1048576 > ${OUT:-/tmp/s16}/sw-np$np-osu.log 2>&1
  install/bin/weft-bench compare --peer openmpi --rounds 2 -n $np --no-plot --out-dir ${OUT:-/tmp/s16}/sw-np$np-B --bench $B -- -m 4:1048576 -B > ${OUT:-/tmp/s16}/sw-np$np-B.log 2>&1
done
echo done > ${OUT:-/tmp/s16}/sweep.done
