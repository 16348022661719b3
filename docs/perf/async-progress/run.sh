#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# WEFT_ASYNC_PROGRESS measurements of docs/performance.md ("Asynchronous
# progress"). As root, from the repository, after the README's build:
#   docs/perf/async-progress/run.sh > out.txt
# 1. latency and bw across two namespace hosts, thread off/on, net and tcp;ofi_rxm
# 2. one rank per host: how long the origin's operations on a target computing
#    without MPI calls take (tests/mpi/rma_async_progress prints it)
# 3. intra-node latency, thread off/on
set -e
bench/netmod/netns_ab.sh latency 0:65536 4 off=install on=install:WEFT_ASYNC_PROGRESS=1 \
    offrxm=install:WEFT_OFI_PROVIDER='tcp;ofi_rxm' \
    onrxm=install:WEFT_ASYNC_PROGRESS=1,WEFT_OFI_PROVIDER='tcp;ofi_rxm' > /tmp/async-lat.txt
python3 bench/netmod/ab_summary.py /tmp/async-lat.txt
bench/netmod/netns_ab.sh bw 8192:262144 8 off=install on=install:WEFT_ASYNC_PROGRESS=1 > /tmp/async-bw.txt
python3 bench/netmod/ab_summary.py /tmp/async-bw.txt

NS=tests/netmod/netns_hosts.sh
export NS_TAG=nm NS_NET=31 PER_HOST=1
$NS down >/dev/null 2>&1 || true
$NS up 2 >/dev/null
trap '$NS down >/dev/null' EXIT INT TERM
for r in 1 2 3; do
    for p in net 'tcp;ofi_rxm'; do
        for a in 1 0; do
            printf '%s async=%s round %s: ' "$p" "$a" "$r"
            env WEFT_OFI_PROVIDER="$p" WEFT_ASYNC_PROGRESS=$a WEFT_RMA_FAKE_PPN=1 WEFT_TEST_HOST_BLOCK=1 \
                install/bin/mpirun -n 2 $NS exec build/tests/mpi/rma_async_progress report 5 allocate 2>&1 |
                grep -o 'operations .* target computed ([0-9.]* s)'
        done
    done
done
for r in 1 2 3; do
    for a in 0 1; do
        printf 'intra-node async=%s: ' "$a"
        WEFT_ASYNC_PROGRESS=$a install/bin/mpirun -n 2 install/libexec/weft-bench/latency -m 0:4096 -i 20000 |
            grep -v '^#' | awk '{printf "%s:%s ", $1, $2} END {print ""}'
    done
done
