#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Benchmark driver (never pass/fail): measures, per message size, the two
# intra-node rendezvous mechanisms (CMA single copy vs the 2-copy pipeline)
# and eager vs rendezvous, so the shipped thresholds
# (WEFT_SMP_EAGERSIZE, WEFT_SMP_CMA_THRESHOLD) come from measurement.
# Usage: tests/perf/tune_shm.sh [prefix]   (ranks pinned to cores 0 and 1)
set -eu
PREFIX=${1:-$(cd "$(dirname "$0")/../.." && pwd)/install}
B=$PREFIX/libexec/weft-bench
RUN="$PREFIX/bin/mpirun -n 2"
col() { awk '!/^#/ && NF>=2 {print $1, $2}'; }
echo "# bandwidth (MB/s, window 64) by rendezvous mechanism; eager limit 16k"
echo "# size  cma  pipeline(64k x4)  pipeline(256k x4)"
$RUN env WEFT_SMP_CMA_THRESHOLD=0 $B/bw -m 32768:67108864 -i 30 -x 5 | col > /tmp/tune_cma.$$
$RUN env WEFT_SMP_USE_CMA=0 $B/bw -m 32768:67108864 -i 30 -x 5 | col > /tmp/tune_pipe.$$
$RUN env WEFT_SMP_USE_CMA=0 WEFT_SMP_SEND_BUF_SIZE=256k $B/bw -m 32768:67108864 -i 30 -x 5 | col > /tmp/tune_pipe2.$$
join /tmp/tune_cma.$$ /tmp/tune_pipe.$$ | join - /tmp/tune_pipe2.$$
echo "# latency (us) eager vs rendezvous"
echo "# size  eager(limit 64k)  rendezvous-cma  rendezvous-pipeline"
$RUN env WEFT_SMP_EAGERSIZE=65536 $B/latency -m 1024:65536 -i 2000 | col > /tmp/tune_e.$$
$RUN env WEFT_SMP_EAGERSIZE=512 WEFT_SMP_CMA_THRESHOLD=0 $B/latency -m 1024:65536 -i 2000 | col > /tmp/tune_r.$$
$RUN env WEFT_SMP_EAGERSIZE=512 WEFT_SMP_USE_CMA=0 $B/latency -m 1024:65536 -i 2000 | col > /tmp/tune_p.$$
join /tmp/tune_e.$$ /tmp/tune_r.$$ | join - /tmp/tune_p.$$
rm -f /tmp/tune_*.$$
