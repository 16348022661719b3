#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Benchmark driver (never pass/fail): one weft-bench collective on Weft with
the shipped rules ("weft"), on Weft with the shared-memory algorithm forced
("shm") and on pip MPICH 5.0.2 ("mpich": the same binaries, only
LD_LIBRARY_PATH differs), rounds alternating A B C A B C ..., medians per
size. This is how the issue 18 rows of src/coll/tuning/default.rules and
docs/performance.md were chosen and measured.

Usage: coll_shm_compare.py COLL NP ROUNDS [weft-bench options, e.g. -m 4096:4194304 -B]
Env: WEFT_PREFIX (default ./install), MPICH_VENV (default
~/.cache/weft-bench/venv-mpich, which `weft-bench compare --peer mpich`
creates), SIDES=weft,shm,mpich (a subset, in that order).
"""
import os
import statistics
import subprocess
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    coll, n, rounds, extra = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    prefix = os.path.abspath(os.environ.get("WEFT_PREFIX", "install"))
    mpich = os.path.expanduser(os.environ.get("MPICH_VENV", "~/.cache/weft-bench/venv-mpich"))
    binp = os.path.join(prefix, "libexec", "weft-bench", coll)
    weft_env = {"LD_LIBRARY_PATH": os.path.join(prefix, "lib")}
    sides = {
        "weft": ([os.path.join(prefix, "bin", "mpirun"), "-n", str(n)], weft_env),
        "shm": ([os.path.join(prefix, "bin", "mpirun"), "-n", str(n)],
                dict(weft_env, **{"WEFT_%s_ALGORITHM" % coll.upper(): "shm"})),
        "mpich": ([os.path.join(mpich, "bin", "mpiexec"), "-bind-to",
                   "none" if n > os.cpu_count() else "core", "-n", str(n)],
                  {"LD_LIBRARY_PATH": os.path.join(mpich, "lib")}),
    }
    only = os.environ.get("SIDES")
    if only:
        sides = {k: v for k, v in sides.items() if k in only.split(",")}
    res = {k: {} for k in sides}
    for _ in range(rounds):
        for k, (cmd, env) in sides.items():
            e = dict(os.environ)
            e.update(env)
            try:
                out = subprocess.run(cmd + [binp] + extra, env=e, capture_output=True, text=True,
                                     timeout=600).stdout
            except subprocess.TimeoutExpired:
                print("# %s: a round timed out" % k)
                continue
            for line in out.splitlines():
                p = line.split()
                if len(p) >= 2 and p[0].isdigit():
                    res[k].setdefault(int(p[0]), []).append(float(p[1]))
    sizes = sorted(set().union(*[set(v) for v in res.values()]))
    print("# %s np %d, median of %d (us): %s" % (coll, n, rounds, " ".join(sides)))
    for s in sizes:
        row = [statistics.median(res[k][s]) if res[k].get(s) else float("nan") for k in sides]
        print("%9d " % s + " ".join("%10.2f" % x for x in row))


if __name__ == "__main__":
    main()
