#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# hydra "ssh": [ssh options] host command... ; own network and UTS namespace
# (hostname = host) so MPICH sees two nodes.
while [ "${1#-}" != "$1" ]; do shift; done
h=$1; shift
exec ip netns exec "$h" unshare -u sh -c "hostname $h; export FI_TCP_IFACE=eth0 FI_SOCKETS_IFACE=eth0; $*"
