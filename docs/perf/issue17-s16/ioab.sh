#!/bin/sh
# ioab.sh PATTERN NP ROUNDS SIZES ITERS DIR: old (build/bench-prefix) / new (install) / mpich alternating
cd "$(git rev-parse --show-toplevel)"
OLD=${OLD:-build/bench-prefix}  # install of the build before
pat=$1; np=$2; rounds=$3; m=$4; it=$5; dir=${6:-/dev/shm}
M=$HOME/.cache/weft-bench/venv-mpich
for r in $(seq $rounds); do
  for v in old new mpich; do
    echo "### $v round $r"
    case $v in
    old) WB_IO_DIR=$dir LD_LIBRARY_PATH=$OLD/lib $OLD/bin/mpirun -n $np $OLD/libexec/weft-bench/$pat -m $m -i $it ;;
    new) WB_IO_DIR=$dir LD_LIBRARY_PATH=install/lib install/bin/mpirun -n $np install/libexec/weft-bench/$pat -m $m -i $it ;;
    mpich) WB_IO_DIR=$dir LD_LIBRARY_PATH=$M/lib $M/bin/mpiexec -n $np -bind-to core $OLD/libexec/weft-bench/$pat -m $m -i $it ;;
    esac | grep -v '^#'
  done
done
