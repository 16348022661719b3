#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Benchmark driver (never pass/fail): one weft-bench program at np 2 on
several Weft installs (or env settings) and pip MPICH 5.0.2, rounds
alternating the sides (A B C A B C ...), median and best per size.

Usage: ab_compare.py ROUNDS BENCH 'BENCH ARGS' NAME=PREFIX[:K=V;K=V] ... [NAME=mpich]
  PREFIX: a Weft install (its mpirun, its lib, its weft-bench binaries);
  mpich: ~/.cache/weft-bench/venv-mpich (MPICH_VENV) running the first
  side's weft-bench binary (same binaries, only LD_LIBRARY_PATH differs).
Example (issue 18, docs/performance.md):
  ab_compare.py 3 bw "-m 4096:4194304 -i 1000:100 -x 100:10" \
      main=/tmp/main-install new=$PWD/install mpich=mpich
"""
import os, statistics, subprocess, sys
if len(sys.argv) < 5:
    sys.exit(__doc__)
rounds, bench, args = int(sys.argv[1]), sys.argv[2], sys.argv[3].split()
sides = []
for s in sys.argv[4:]:
    name, rest = s.split("=", 1)
    prefix, _, env = rest.partition(":")
    sides.append((name, prefix, [e for e in env.split(";") if e]))
res = {n: {} for n, _, _ in sides}
loads = []
for _ in range(rounds):
    for name, prefix, env in sides:
        loads.append(float(open("/proc/loadavg").read().split()[0]))
        if prefix == "mpich":
            m = os.path.expanduser(os.environ.get("MPICH_VENV", "~/.cache/weft-bench/venv-mpich"))
            cmd = [m + "/bin/mpiexec", "-n", "2", "-bind-to", "core", "env"] + env + \
                  [sides[0][1] + "/libexec/weft-bench/" + bench] + args
            e = dict(os.environ, LD_LIBRARY_PATH=m + "/lib")
        else:
            cmd = [prefix + "/bin/mpirun", "-n", "2", "env"] + env + [prefix + "/libexec/weft-bench/" + bench] + args
            e = dict(os.environ, LD_LIBRARY_PATH=prefix + "/lib")
        try:
            out = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=600).stdout
        except subprocess.TimeoutExpired:
            print("# %s: a round timed out" % name)
            continue
        for line in out.splitlines():
            p = line.split()
            if len(p) >= 2 and p[0].isdigit():
                res[name].setdefault(int(p[0]), []).append(float(p[1]))
sizes = sorted(set().union(*[set(v) for v in res.values()]))
print("# %s %s, %d rounds, load %.1f-%.1f; per side: median / best" % (bench, " ".join(args), rounds, min(loads), max(loads)))
print("%9s " % "size" + " ".join("%21s" % n for n, _, _ in sides))
best = max if bench in ("bw", "bibw") else min
for s in sizes:
    cells = []
    for n, _, _ in sides:
        v = res[n].get(s, [])
        cells.append("%10.2f /%9.2f" % (statistics.median(v), best(v)) if v else "%21s" % "-")
    print("%9d " % s + " ".join(cells))
