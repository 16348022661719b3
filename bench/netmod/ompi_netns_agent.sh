#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rsh agent (plm_rsh_agent) for Open MPI across namespace hosts: host 10.77.N.i runs in
# ${NS_TAG}h$i (tests/netmod/netns_hosts.sh) under its own host name (a UTS namespace:
# with one shared name the TCP BTL aborts with "Socket closed"); see docs/performance.md
# "Open MPI across namespace hosts, tried".
host=$1; shift
i=${host##*.}
exec ip netns exec "${NS_TAG:-nm}h$i" unshare --uts sh -c "hostname ${NS_TAG:-nm}h$i; $*"
