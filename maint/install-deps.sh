#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Install Weft's build and test dependencies (Debian). As root: apt-get.
# Otherwise: print the exact command and fail.
set -e
need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in cmake ninja-build pkg-config gcc g++ make libhwloc-dev hwloc python3 python3-venv procps iproute2 libssl-dev openssh-client strace libfabric-dev libfabric-bin \
         slurm-wlm slurmctld slurmd munge libpmix-dev \
         curl zlib1g-dev; do # curl, zlib: parallel HDF5 test (maint/build-hdf5.sh)
    have_pkg "$p" || need="$need $p"
done
[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ]; then
    echo "weft: installing build dependencies:$need"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null || true
    apt-get install -y -qq $need >/dev/null
else
    echo "weft: missing build dependencies:$need" >&2
    echo "weft: run: sudo apt-get install -y$need" >&2
    exit 1
fi
