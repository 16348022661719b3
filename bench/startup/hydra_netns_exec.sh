#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# hydra's remote-start command for network-namespace "hosts" (mpiexec
# -launcher ssh -launcher-exec bench/startup/hydra_netns_exec.sh): hydra
# calls it as ssh, `CMD -x HOST "proxy command line"`, so the line goes to a
# shell inside namespace HOST.
[ "$1" = "-x" ] && shift
host=$1
shift
exec ip netns exec "$host" sh -c "$*"
