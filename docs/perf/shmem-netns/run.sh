#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# OpenSHMEM (osh_*) and MPI RMA (libfabric RMA) across 2 namespace hosts, 5 rounds back to back;
# NS_TAG=sn NS_NET=14 tests/netmod/netns_hosts.sh up 2 first. Summarise with median.py raw.txt.
cd "$(dirname "$0")/../../.."
B=install/libexec/weft-bench
export PER_HOST=1 WEFT_TEST_HOST_BLOCK=1 NS_TAG=sn NS_NET=14
R="install/bin/mpirun -n 2 tests/netmod/netns_hosts.sh exec"
for round in 1 2 3 4 5; do
  echo "=== round $round $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "--- osh_put_latency"; WEFT_SHMEM_FAKE_PPN=1 timeout 200 $R $B/osh_put_latency -m 8:65536 -i 1000:200 -x 50:20 | grep -v '^#'
  echo "--- osh_get_latency"; WEFT_SHMEM_FAKE_PPN=1 timeout 200 $R $B/osh_get_latency -m 8:65536 -i 1000:200 -x 50:20 | grep -v '^#'
  echo "--- osh_atomic_latency"; WEFT_SHMEM_FAKE_PPN=1 timeout 200 $R $B/osh_atomic_latency -i 1000 -x 50 | grep -v '^# [A-Z]'
  echo "--- osh_put_bw"; WEFT_SHMEM_FAKE_PPN=1 timeout 300 $R $B/osh_put_bw -m 65536:4194304 -i 10:10 -x 2:2 -W 16 | grep -v '^#'
  echo "--- osh_put_bw messages"; WEFT_SHMEM_FAKE_PPN=1 WEFT_SHMEM_NET_RMA=0 timeout 300 $R $B/osh_put_bw -m 65536:4194304 -i 10:10 -x 2:2 -W 16 | grep -v '^#'
  echo "--- mpi put_latency native"; WEFT_RMA_FAKE_PPN=1 WEFT_RMA_NET=native timeout 200 $R $B/put_latency -m 8:65536 -i 1000:200 -x 50:20 | grep -v '^#'
  echo "--- mpi get_latency native"; WEFT_RMA_FAKE_PPN=1 WEFT_RMA_NET=native timeout 200 $R $B/get_latency -m 8:65536 -i 1000:200 -x 50:20 | grep -v '^#'
  echo "--- mpi fop_latency"; WEFT_RMA_FAKE_PPN=1 WEFT_RMA_NET=native timeout 200 $R $B/fop_latency -i 1000 -x 50 | grep -v '^#'
  echo "--- mpi put_bw native"; WEFT_RMA_FAKE_PPN=1 WEFT_RMA_NET=native timeout 300 $R $B/put_bw -m 65536:4194304 -i 10:10 -x 2:2 -W 16 | grep -v '^#'
  echo "--- pt2pt latency"; timeout 60 $R $B/latency -m 8:8 -i 1000 -x 50 | grep -v '^#'
done
