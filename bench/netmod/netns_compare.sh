#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Issue 11's across-host comparison on one machine: two network-namespace
# hosts (tests/netmod/netns_hosts.sh: wbh1/wbh2, 10.77.12.1-2 on a bridge),
# one rank on each, and the same weft-bench latency / bw / bibw run by
#   Weft           mpirun, ranks exec'd into their namespace by PMI_RANK,
#                  WEFT_TEST_HOST_BLOCK=1 (each rank its own host), tcp;ofi_rxm
#   MPICH 5.0.2    pip (built with ch4:ucx, not ofi), hydra, same binaries,
#                  MPIR_CVAR_NOLOCAL=1 and UCX_TLS=tcp,self: the namespaces
#                  share a hostname and /dev/shm, and UCX would otherwise
#                  reach the other "host" through shared memory
# and the floor: tcp_pingpong (one TCP socket, no MPI). Rounds alternate the
# libraries, so each size is measured by both in the same minutes.
# Open MPI is not run: its ranks reach their PMIx server over TCP loopback,
# which a rank moved into another network namespace cannot reach (MPI_Init
# fails: "PML add procs failed").
# As root, from the repository, after `make install` (and `weft-bench compare
# --peer mpich` once, for the peer):
#   bench/netmod/netns_compare.sh [ROUNDS=3] [MAX_LAT=1048576] [MAX_BW=4194304]
# BASE_INSTALL=<another Weft install> (e.g. main's) adds it to every round, as
# "base", for an A/B of a change in the same minutes.
# WEFT_NO_MPICH=1 leaves MPICH out (A/B runs only).
# Output: one block per library, benchmark and round (weft-bench columns).
set -e
rounds=${1:-3}; max_lat=${2:-1048576}; max_bw=${3:-4194304}
CACHE=${WEFT_BENCH_CACHE:-$HOME/.cache/weft-bench}
B=install/libexec/weft-bench
M=$CACHE/venv-mpich
NS=tests/netmod/netns_hosts.sh
mkdir -p build/bench
cc -O2 -o build/bench/tcp_pingpong bench/netmod/tcp_pingpong.c
trap '$NS down' EXIT INT TERM
$NS down
$NS up 2
export PER_HOST=1
args() { [ "$1" = latency ] && echo "-m 0:$max_lat" || echo "-m 1024:$max_bw"; }
r=1
while [ "$r" -le "$rounds" ]; do
    for b in latency bw bibw; do
        echo "### weft $b round $r"
        WEFT_TEST_HOST_BLOCK=1 install/bin/mpirun -n 2 $NS exec $B/$b $(args $b)
        if [ -n "$BASE_INSTALL" ]; then
            echo "### base $b round $r"
            WEFT_TEST_HOST_BLOCK=1 $BASE_INSTALL/bin/mpirun -n 2 $NS exec \
                $BASE_INSTALL/libexec/weft-bench/$b $(args $b)
        fi
        if [ -x "$M/bin/mpiexec" ] && [ -z "$WEFT_NO_MPICH" ]; then
            echo "### mpich $b round $r"
            MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self UCX_NET_DEVICES=eth0 LD_LIBRARY_PATH=$M/lib \
                $M/bin/mpiexec -bind-to core -n 2 $NS exec $B/$b $(args $b)
        fi
    done
    echo "### tcp floor round $r"
    ip netns exec wbh1 build/bench/tcp_pingpong server 47211 &
    ip netns exec wbh2 build/bench/tcp_pingpong client 10.77.12.1 47211 $max_bw
    wait
    r=$((r + 1))
done
