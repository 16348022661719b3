#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# rsh agent (plm_rsh_agent) for Open MPI across namespace hosts: host 10.77.N.i runs in
# ${NS_TAG}h$i (tests/netmod/netns_hosts.sh) under its own host name (a UTS namespace:
# with one shared name the TCP BTL aborts with "Socket closed"), its daemon pinned to
# CPU i-1 (modulo the CPUs). Run mpirun with --bind-to none: each daemon sees a whole
# host and would bind its rank to core 0 of it, so every host's rank shares CPU 0 and a
# busy-polling rank holds it for a scheduler tick (4 ms per message); with --bind-to none
# the rank keeps the daemon's CPU, one per host as Weft's and MPICH's launchers place
# them. See docs/performance.md "Open MPI across namespace hosts".
host=$1; shift
i=${host##*.}
cpu=$(( (i - 1) % $(nproc --all) )) # --all: mpirun itself may be pinned to one CPU
exec ip netns exec "${NS_TAG:-nm}h$i" taskset -c "$cpu" unshare --uts sh -c "hostname ${NS_TAG:-nm}h$i; $*"
