#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Startup across network-namespace "hosts" (issue 12: 4 hosts x 16): makes
# H namespaces wsbh1..wsbhH, each with eth0 at 10.79.0.<10+i>/24, joined by a
# bridge wsbbr (10.79.0.1, carrying mpirun's address) in this namespace; runs
# bench/startup/launch_times.py with -hosts over them for Weft's mpirun and,
# where pip MPICH is in the weft-bench cache, hydra (MPICH's library and
# Weft's; hydra starts its proxies through hydra_netns_exec.sh); then
# removes everything. The host names resolve from a private /etc/hosts. The
# namespaces share one hostname, so MPICH's library sees one node (shared
# memory between the "hosts"); Weft's uses its netmod.
# As root, from the repository:
#   bench/startup/netns_startup.sh [HOSTS=4] [PER_HOST=16] [launch_times.py args...]
# e.g. bench/startup/netns_startup.sh 4 16 --sizes 64 --stacks weft,mpich,hydra+weft
set -e
h=${1:-4}; per=${2:-16}
[ $# -ge 2 ] && shift 2 || shift $#
cleanup() {
    i=1
    while [ "$i" -le "$h" ]; do ip netns del "wsbh$i" 2>/dev/null || true; i=$((i + 1)); done
    ip link del wsbbr 2>/dev/null || true
}
trap cleanup EXIT INT TERM
cleanup
ip link add wsbbr type bridge
ip addr add 10.79.0.1/24 dev wsbbr
ip link set wsbbr up
hosts=""
i=1
while [ "$i" -le "$h" ]; do
    ip netns add "wsbh$i"
    ip link add "wsbv$i" type veth peer name eth0 netns "wsbh$i"
    ip link set "wsbv$i" master wsbbr up
    ip -n "wsbh$i" addr add "10.79.0.$((10 + i))/24" dev eth0
    ip -n "wsbh$i" link set eth0 up
    ip -n "wsbh$i" link set lo up
    hosts="$hosts${hosts:+,}wsbh$i:$per"
    i=$((i + 1))
done
# The host names resolve from a private /etc/hosts (a mount namespace of
# this run only), as a cluster's do, so that the machine's own resolver (a
# lost reply costs glibc's 5 s) is not part of what is measured.
names=$(mktemp)
trap 'cleanup; rm -f "$names"' EXIT INT TERM
cat /etc/hosts > "$names"
i=1
while [ "$i" -le "$h" ]; do echo "10.79.0.$((10 + i)) wsbh$i" >> "$names"; i=$((i + 1)); done
export WEFT_LAUNCHER_CMD='ip netns exec %h' NAMES="$names"
unshare -m sh -c 'mount --bind "$NAMES" /etc/hosts && exec "$@"' sh \
    python3 bench/startup/launch_times.py --stacks weft \
    --hosts "$hosts" --weft-args "-iface wsbbr" \
    --hydra-args "-launcher ssh -launcher-exec $PWD/bench/startup/hydra_netns_exec.sh -iface wsbbr" "$@"
