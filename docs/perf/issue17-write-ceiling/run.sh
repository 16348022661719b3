#!/bin/sh
# Issue 17: the shared-file write ceiling beside np 2 strided collective writes,
# same minutes. From the repository root, after `make install` and
# `weft-bench compare --peer mpich` once (for the pip MPICH venv):
#   docs/perf/issue17-write-ceiling/run.sh > docs/perf/issue17-write-ceiling/run.txt
D=$(dirname "$0"); P=$PWD/install; V=${WEFT_BENCH_CACHE:-$HOME/.cache/weft-bench}/venv-mpich
cc -O2 -Wall -o /tmp/write_ceiling "$D/write_ceiling.c" || exit 1
for dir in /dev/shm /tmp; do
    for size in 1048576 2097152; do
        n=$((64 * 1048576 / size))
        /tmp/write_ceiling 1 1 $size $n $dir
        /tmp/write_ceiling 2 1 $size $((n / 2)) $dir
        /tmp/write_ceiling 2 0 $size $((n / 2)) $dir
    done
    for r in 1 2 3 4; do
        LD_LIBRARY_PATH=$P/lib WB_IO_DIR=$dir $P/bin/mpirun -n 2 $P/libexec/weft-bench/io_strided -m 1m:2m -i 16:16 |
            grep -v '^#' | sed "s|^|weft $dir |"
        LD_LIBRARY_PATH=$V/lib WB_IO_DIR=$dir $V/bin/mpiexec -n 2 -bind-to core $P/libexec/weft-bench/io_strided -m 1m:2m -i 16:16 |
            grep -v '^#' | sed "s|^|mpich $dir |"
    done
done
