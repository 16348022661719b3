#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Network-namespace "hosts" for benchmarks by hand (tests/netmod/test_netns.py
# builds its own). As root:
#   tests/netmod/netns_hosts.sh up [N]   N hosts wbh1..wbhN (10.77.12.i/24) on a bridge
#   tests/netmod/netns_hosts.sh down
#   tests/netmod/netns_hosts.sh exec   # as a launcher wrapper: runs "$@" in host
#                                      # PMI_RANK / PER_HOST + 1 (PER_HOST default 1)
set -e
case "$1" in
up)
    n=${2:-2}
    ip netns add wbsw
    ip -n wbsw link add br0 type bridge
    ip -n wbsw link set br0 up
    i=1
    while [ "$i" -le "$n" ]; do
        ip netns add "wbh$i"
        ip link add "wbv$i" type veth peer name "wbp$i"
        ip link set "wbv$i" netns "wbh$i"
        ip link set "wbp$i" netns wbsw
        ip -n "wbh$i" link set "wbv$i" name eth0
        ip -n "wbh$i" addr add "10.77.12.$i/24" dev eth0
        ip -n "wbh$i" link set eth0 up
        ip -n "wbh$i" link set lo up
        ip -n wbsw link set "wbp$i" master br0
        ip -n wbsw link set "wbp$i" up
        i=$((i + 1))
    done
    ;;
down)
    for ns in $(ip netns list | awk '/^wb(h[0-9]+|sw)/ {print $1}'); do ip netns del "$ns"; done
    ;;
exec)
    shift
    r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}} # Weft/hydra, Open MPI
    h=$(( r / ${PER_HOST:-1} + 1 ))
    exec ip netns exec "wbh$h" env FI_TCP_IFACE=eth0 FI_SOCKETS_IFACE=eth0 "$@"
    ;;
*)
    echo "usage: $0 up [N] | down | exec PROGRAM [ARGS]" >&2
    exit 2
    ;;
esac
