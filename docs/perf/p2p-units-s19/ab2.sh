#!/bin/sh
# ab2.sh BENCH SIZES ROUNDS: new vs base (BASE) np 2, one line per row
b=$1; m=$2; rounds=$3
for r in $(seq $rounds); do
  install/bin/mpirun -n ${NP:-2} install/libexec/weft-bench/$b -m $m $EXTRA | grep -v '^#' | awk -v v=new -v b=$b '{print v, b, $1, $2}'
  LD_LIBRARY_PATH=$BASE/lib $BASE/bin/mpirun -n ${NP:-2} install/libexec/weft-bench/$b -m $m $EXTRA | grep -v '^#' | awk -v v=base -v b=$b '{print v, b, $1, $2}'
done
