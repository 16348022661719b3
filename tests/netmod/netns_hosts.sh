#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Network-namespace "hosts" for benchmarks by hand (tests/netmod/test_netns.py
# builds its own). As root:
#   tests/netmod/netns_hosts.sh up [N]   N hosts wbh1..wbhN (10.77.12.i/24) on a bridge
#   tests/netmod/netns_hosts.sh down
#   tests/netmod/netns_hosts.sh exec   # as a launcher wrapper: runs "$@" in host
#                                      # PMI_RANK / PER_HOST + 1 (PER_HOST default 1)
# NS_TAG (default wb) and NS_NET (default 12) give another set of names and
# subnet (NS_TAGh1.., 10.77.NS_NET.i), so two uses at once do not collide;
# exec needs the same NS_TAG in the ranks' environment.
set -e
t=${NS_TAG:-wb}
net=${NS_NET:-12}
case "$1" in
up)
    n=${2:-2}
    ip netns add "${t}sw"
    ip -n "${t}sw" link add br0 type bridge
    ip -n "${t}sw" link set br0 up
    i=1
    while [ "$i" -le "$n" ]; do
        ip netns add "${t}h$i"
        ip link add "${t}v$i" type veth peer name "${t}p$i"
        ip link set "${t}v$i" netns "${t}h$i"
        ip link set "${t}p$i" netns "${t}sw"
        ip -n "${t}h$i" link set "${t}v$i" name eth0
        ip -n "${t}h$i" addr add "10.77.$net.$i/24" dev eth0
        ip -n "${t}h$i" link set eth0 up
        ip -n "${t}h$i" link set lo up
        ip -n "${t}sw" link set "${t}p$i" master br0
        ip -n "${t}sw" link set "${t}p$i" up
        i=$((i + 1))
    done
    ;;
down)
    for ns in $(ip netns list | awk -v t="$t" '$1 ~ "^" t "(h[0-9]+|sw)$" {print $1}'); do
        # a run cut short leaves its processes running once the namespace is gone
        ip netns pids "$ns" | xargs -r kill -9
        ip netns del "$ns"
    done
    ;;
exec)
    shift
    r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}} # Weft/hydra, Open MPI
    h=$(( r / ${PER_HOST:-1} + 1 ))
    exec ip netns exec "${t}h$h" env FI_TCP_IFACE=eth0 FI_SOCKETS_IFACE=eth0 "$@"
    ;;
*)
    echo "usage: $0 up [N] | down | exec PROGRAM [ARGS]" >&2
    exit 2
    ;;
esac
