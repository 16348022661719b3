#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Two namespace hosts rnh1, rnh2 for the RMA measurement (docs/performance.md).
#   ns.sh up | down | exec PROGRAM ARGS (as a Weft mpirun wrapper: host PMI_RANK/PER_HOST+1)
set -e
case "$1" in
up)
    ip netns add rnsw; ip -n rnsw link add br0 type bridge; ip -n rnsw link set br0 up
    for i in 1 2; do
        ip netns add "rnh$i"
        ip link add "rnv$i" type veth peer name "rnp$i"
        ip link set "rnv$i" netns "rnh$i"; ip link set "rnp$i" netns rnsw
        ip -n "rnh$i" link set "rnv$i" name eth0
        ip -n "rnh$i" addr add "10.77.13.$i/24" dev eth0
        ip -n "rnh$i" link set eth0 up; ip -n "rnh$i" link set lo up
        ip -n rnsw link set "rnp$i" master br0; ip -n rnsw link set "rnp$i" up
    done
    # the root namespace on the bridge too: hydra's proxies connect back to mpiexec (-iface rnv0)
    ip link add rnv0 type veth peer name rnp0; ip link set rnp0 netns rnsw
    ip -n rnsw link set rnp0 master br0; ip -n rnsw link set rnp0 up
    ip addr add 10.77.13.100/24 dev rnv0; ip link set rnv0 up ;;
down) ip link del rnv0 2>/dev/null || true
    for ns in rnh1 rnh2 rnsw; do ip netns del $ns 2>/dev/null || true; done ;;
exec) shift; h=$(( ${PMI_RANK:-0} / ${PER_HOST:-1} + 1 ))
    exec ip netns exec "rnh$h" env FI_TCP_IFACE=eth0 FI_SOCKETS_IFACE=eth0 "$@" ;;
esac
