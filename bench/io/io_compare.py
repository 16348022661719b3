#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Weft vs MPICH (pip mpich, ROMIO) on the weft-bench MPI-IO benchmarks, the
very same binaries (LD_LIBRARY_PATH swap). Runs every pattern x np x
directory `--rounds` times, alternating the libraries, and prints markdown
tables of the median MB/s of each column and the Weft/MPICH ratio.

  bench/io/io_compare.py --prefix install --mpich-venv ~/.cache/weft-bench/venv-mpich \
      [--np 2,4] [--dirs /tmp,/dev/shm] [--rounds 3] [-- benchmark options]
"""
import argparse
import os
import statistics
import subprocess
import sys

PATTERNS = ["io_contig", "io_interleaved", "io_strided"]
COLS = ["Ind write", "Ind read", "Coll write", "Coll read"]


def run(cmd, env, timeout):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s%s" % (p.returncode, " ".join(cmd), p.stdout[-2000:], p.stderr[-2000:]))
    rows = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0].isdigit():
            rows[int(f[0])] = [float(x) for x in f[1:5]]
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="install")
    ap.add_argument("--mpich-venv", default=os.path.expanduser("~/.cache/weft-bench/venv-mpich"))
    ap.add_argument("--np", default="2,4")
    ap.add_argument("--dirs", default="/tmp,/dev/shm")
    ap.add_argument("--patterns", default=",".join(PATTERNS))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("rest", nargs="*", help="benchmark options (after --)")
    a = ap.parse_args()
    prefix = os.path.abspath(a.prefix)
    bindir = os.path.join(prefix, "libexec", "weft-bench")
    for pattern in a.patterns.split(","):
        for np_ in [int(x) for x in a.np.split(",")]:
            for d in a.dirs.split(","):
                res = {"weft": [], "mpich": []}
                for _ in range(a.rounds):
                    for lib in ("weft", "mpich"):
                        env = dict(os.environ, WB_IO_DIR=d)
                        exe = os.path.join(bindir, pattern)
                        if lib == "weft":
                            env["LD_LIBRARY_PATH"] = os.path.join(prefix, "lib")
                            cmd = [os.path.join(prefix, "bin", "mpirun"), "-n", str(np_), exe] + a.rest
                        else:
                            env["LD_LIBRARY_PATH"] = os.path.join(a.mpich_venv, "lib")
                            # bound like Weft's mpirun binds by default (as weft-bench compare does)
                            bind = "core" if np_ <= (os.cpu_count() or 1) else "none"
                            cmd = [os.path.join(a.mpich_venv, "bin", "mpiexec"), "-n", str(np_), "-bind-to",
                                   bind, exe] + a.rest
                        res[lib].append(run(cmd, env, a.timeout))
                sizes = sorted(res["weft"][0])
                print("\n#### %s, np %d, %s (median of %d, MB/s; ratio Weft/MPICH)\n" % (pattern, np_, d, a.rounds))
                print("| size | " + " | ".join("%s Weft / MPICH (x)" % c for c in COLS) + " |")
                print("|---|" + "---|" * len(COLS))
                for s in sizes:
                    cells = []
                    for i in range(len(COLS)):
                        w = statistics.median(r[s][i] for r in res["weft"])
                        m = statistics.median(r[s][i] for r in res["mpich"])
                        cells.append("%.0f / %.0f (%.2f)" % (w, m, w / m if m else float("nan")))
                    print("| %s | %s |" % (s, " | ".join(cells)))
                sys.stdout.flush()


if __name__ == "__main__":
    main()
