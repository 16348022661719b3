#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Alternating A/B of WEFT_SHMEM_NET_RMA across 2 namespace hosts (as root, after the
# README build); the first run used list "16k 1 0" and -m 8:65536 / 1024:1048576.
# Summarise: python3 bench/netmod/ab_summary.py out.txt
cd "$(dirname "$0")/../../.."
B=install/libexec/weft-bench
export PER_HOST=1 WEFT_TEST_HOST_BLOCK=1 NS_TAG=sn NS_NET=14 WEFT_SHMEM_FAKE_PPN=1
NS=tests/netmod/netns_hosts.sh
$NS down >/dev/null 2>&1 || true
$NS up 2 >/dev/null
trap '$NS down >/dev/null' EXIT INT TERM
R="install/bin/mpirun -n 2 $NS exec"
for round in 1 2 3 4 5 6; do
  list="16k 4k 2k"; [ $((round % 2)) -eq 0 ] && list="2k 4k 16k"
  for v in $list; do
    echo "### rma$v osh_put_latency round $round"; WEFT_SHMEM_NET_RMA=$v timeout 200 $R $B/osh_put_latency -m 512:32768 -i 1000:200 -x 50:20 | grep -v '^#'
    echo "### rma$v osh_get_latency round $round"; WEFT_SHMEM_NET_RMA=$v timeout 200 $R $B/osh_get_latency -m 512:32768 -i 1000:200 -x 50:20 | grep -v '^#'
    echo "### rma$v osh_put_bw round $round"; WEFT_SHMEM_NET_RMA=$v timeout 300 $R $B/osh_put_bw -m 1024:65536 -i 20:10 -x 2:2 -W 16 | grep -v '^#'
  done
done
