#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build parallel HDF5 (the C library and HDF5's own parallel test programs,
# testpar/) with Weft's mpicc, for tests/hdf5. The source is Debian's
# hdf5 1.10.8 tarball (sha256 pinned). The build goes to a cache directory
# outside the repository, keyed by Weft's mpi.h (the ABI) and this recipe:
#   ${WEFT_DEPS_CACHE:-$HOME/.cache/weft-deps}/hdf5-1.10.8-<key>
# and is reused while the key holds (a few seconds); a fresh build takes
# about a minute on 2 cores.
#
# Usage: maint/build-hdf5.sh [WEFT_PREFIX]     (default: $WEFT_PREFIX, ./install)
# Prints the HDF5 directory (include/, lib/, build/testpar/) as the last line.
# Exit 0: ready. Exit 77: cannot be built here (no network, no tool); the
# reason is printed. Other: the build failed (log path printed).
set -eu

VER=1.10.8
TARBALL=hdf5_1.10.8+repack1.orig.tar.gz
URL="http://deb.debian.org/debian/pool/main/h/hdf5/hdf5_1.10.8%2Brepack1.orig.tar.gz"
SHA256=7b38e58ff83b13fd8959a90b13bf896bc318ba096c940ab0847abf3ad41a0b31
RECIPE=1 # bump when the configure line or the program list changes
# testpar programs that build in seconds (t_cache_image, t_bigio: built too,
# run only on request: minutes each)
TESTPAR="t_mpi testphdf5 t_pflush1 t_pflush2 t_pread t_pshutdown t_prestart t_init_term t_shapesame
 t_filters_parallel t_cache t_cache_image t_bigio"

skip() { echo "build-hdf5: skip: $*" >&2; exit 77; }

prefix=${1:-${WEFT_PREFIX:-$(pwd)/install}}
mpicc=$prefix/bin/mpicc
[ -x "$mpicc" ] && [ -f "$prefix/include/mpi.h" ] || { echo "build-hdf5: no Weft install at $prefix" >&2; exit 1; }
for t in curl make tar sha256sum flock; do
    command -v $t >/dev/null 2>&1 || skip "'$t' is not installed"
done

key=$({ cat "$prefix/include/mpi.h"; echo "recipe $RECIPE"; cc --version | head -1; } | sha256sum | cut -c1-12)
cache=${WEFT_DEPS_CACHE:-$HOME/.cache/weft-deps}
dir=$cache/hdf5-$VER-$key
if [ -f "$dir/.complete" ]; then
    echo "$dir"
    exit 0
fi
mkdir -p "$cache"
exec 9>"$cache/.hdf5.lock"
flock 9 # one build at a time (parallel test runs share the cache)
if [ -f "$dir/.complete" ]; then
    echo "$dir"
    exit 0
fi

if [ ! -f "$cache/$TARBALL" ]; then
    echo "build-hdf5: downloading $URL" >&2
    curl -fsS --retry 2 --max-time 300 -o "$cache/$TARBALL.part" "$URL" ||
        { rm -f "$cache/$TARBALL.part"; skip "cannot download $URL (no network?)"; }
    mv "$cache/$TARBALL.part" "$cache/$TARBALL"
fi
got=$(sha256sum "$cache/$TARBALL" | cut -d' ' -f1)
if [ "$got" != "$SHA256" ]; then
    rm -f "$cache/$TARBALL"
    echo "build-hdf5: $TARBALL has sha256 $got, want $SHA256 (removed)" >&2
    exit 1
fi

rm -rf "$dir"
mkdir -p "$dir/build"
log=$dir/build.log
echo "build-hdf5: building HDF5 $VER with $mpicc into $dir (log: $log)" >&2
start=$(date +%s)
jobs=${JOBS:-$(nproc)}
zlib=no
[ -f /usr/include/zlib.h ] && zlib=yes # deflate: t_filters_parallel's parallel filtered writes
(
    cd "$dir" && tar xzf "$cache/$TARBALL" && mv hdf5-$VER* src
    cd build
    CC="$mpicc" ../src/configure --prefix="$dir" --enable-parallel --disable-fortran --disable-cxx \
        --disable-tools --disable-hl --disable-static --enable-build-mode=production \
        --with-zlib=$zlib --with-szlib=no
    make -j"$jobs" -C src
    make -C src install
    make -j"$jobs" -C test libh5test.la
    make -j"$jobs" -C testpar $TESTPAR
) >"$log" 2>&1 || { tail -30 "$log" >&2; echo "build-hdf5: build failed (log: $log)" >&2; exit 1; }
echo "build-hdf5: built in $(($(date +%s) - start)) s (deflate: $zlib)" >&2
touch "$dir/.complete"
echo "$dir"
