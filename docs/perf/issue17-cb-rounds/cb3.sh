#!/bin/sh
# usage: cb3.sh NP DIR ROUNDS SIZES variants...
NP=$1; DIR=$2; R=$3; SZ=$4; shift 4
cd /work/main; B=$PWD/install/libexec/weft-bench/io_strided; MV=~/.cache/weft-bench/venv-mpich
BIND=core; [ $NP -gt 2 ] && BIND=none
for r in $(seq $R); do
 for v in "$@"; do
  if [ $v = mpich ]; then
   out=$(WB_IO_DIR=$DIR LD_LIBRARY_PATH=$MV/lib timeout 300 $MV/bin/mpiexec -n $NP -bind-to $BIND $B -m $SZ -i 16:16 2>&1)
  else
   out=$(WB_IO_DIR=$DIR WEFT_IO_CB_BUFFER_SIZE=$v timeout 300 install/bin/mpirun -n $NP $B -m $SZ -i 16:16 2>&1)
  fi
  echo "$out" | awk -v v=$v -v r=$r '/^[0-9]/{print r, v"-w", $1, $4; print r, v"-r", $1, $5}'
 done
done
