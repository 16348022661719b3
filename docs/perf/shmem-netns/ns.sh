#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# tests/netmod/netns_hosts.sh with its own names (snh1.., snsw, 10.77.14.0/24), so it
# does not collide with other runs of that script. Network-namespace "hosts" (test_netns.py
# builds its own). As root:
#   docs/perf/shmem-netns/ns.sh up [N]   N hosts snh1..snhN (10.77.14.i/24) on a bridge
#   docs/perf/shmem-netns/ns.sh down
#   docs/perf/shmem-netns/ns.sh exec   # as a launcher wrapper: runs "$@" in host
#                                      # PMI_RANK / PER_HOST + 1 (PER_HOST default 1)
set -e
case "$1" in
up)
    n=${2:-2}
    ip netns add snsw
    ip -n snsw link add br0 type bridge
    ip -n snsw link set br0 up
    i=1
    while [ "$i" -le "$n" ]; do
        ip netns add "snh$i"
        ip link add "snv$i" type veth peer name "snp$i"
        ip link set "snv$i" netns "snh$i"
        ip link set "snp$i" netns snsw
        ip -n "snh$i" link set "snv$i" name eth0
        ip -n "snh$i" addr add "10.77.14.$i/24" dev eth0
        ip -n "snh$i" link set eth0 up
        ip -n "snh$i" link set lo up
        ip -n snsw link set "snp$i" master br0
        ip -n snsw link set "snp$i" up
        i=$((i + 1))
    done
    ;;
down)
    for ns in $(ip netns list | awk '/^sn(h[0-9]+|sw)/ {print $1}'); do ip netns del "$ns"; done
    ;;
exec)
    shift
    r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}} # Weft/hydra, Open MPI
    h=$(( r / ${PER_HOST:-1} + 1 ))
    exec ip netns exec "snh$h" env FI_TCP_IFACE=eth0 FI_SOCKETS_IFACE=eth0 "$@"
    ;;
*)
    echo "usage: $0 up [N] | down | exec PROGRAM [ARGS]" >&2
    exit 2
    ;;
esac
