#!/bin/sh
# ioenv.sh PATTERN NP ROUNDS SIZES ITERS LABEL=ENV[,ENV] ... mpich
cd "$(git rev-parse --show-toplevel)"
pat=$1; np=$2; rounds=$3; m=$4; it=$5; shift 5
M=$HOME/.cache/weft-bench/venv-mpich
for r in $(seq $rounds); do
  for spec in "$@"; do
    echo "### ${spec%%=*} round $r"
    if [ "$spec" = mpich ]; then
      WB_IO_DIR=/dev/shm LD_LIBRARY_PATH=$M/lib $M/bin/mpiexec -n $np -bind-to core install/libexec/weft-bench/$pat -m $m -i $it
    else
      envs=$(echo "${spec#*=}" | tr ',' ' ')
      env $envs WB_IO_DIR=/dev/shm install/bin/mpirun -n $np install/libexec/weft-bench/$pat -m $m -i $it
    fi | grep -v '^#'
  done
done
