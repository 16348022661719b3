#!/bin/sh
# usage: rma_ab.sh ROUNDS  (from /work/main, as root)
D=docs/perf/rma-netns; B=install/libexec/weft-bench; M=$HOME/.cache/weft-bench/venv-mpich
$D/ns.sh down >/dev/null 2>&1; $D/ns.sh up
trap "$D/ns.sh down" EXIT
for r in $(seq 1 $1); do
  for bench in "put_latency -m 8:65536 -i 200:50 -x 20:5" "get_latency -m 8:65536 -i 200:50 -x 20:5" "fop_latency -i 200 -x 20" "put_bw -m 65536:4194304 -i 10:10 -x 2:2 -W 16"; do
    set -- $bench; b=$1; shift
    for v in native am mpich; do
      echo "### $v $b round $r"
      if [ $v = mpich ]; then
        LD_LIBRARY_PATH=$M/lib timeout 120 $M/bin/mpiexec -launcher ssh -launcher-exec $PWD/$D/launch.sh \
          -hosts rnh1,rnh2 -iface rnv0 -bind-to core -n 2 -ppn 1 \
          -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES eth0 $B/$b "$@" | grep -v '^#'
      else
        PER_HOST=1 WEFT_TEST_HOST_BLOCK=1 WEFT_RMA_FAKE_PPN=1 WEFT_RMA_NET=$v timeout 120 \
          install/bin/mpirun -n 2 $D/ns.sh exec $B/$b "$@" | grep -v '^#'
      fi
    done
  done
done
