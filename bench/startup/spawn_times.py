#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Time of one PMI-level spawn (weft_pmi_spawn, tests/launcher/pmi_dynproc_probe)
of N children from a 1-rank job, under Weft's mpirun and MPICH hydra, and the
wall time of `LAUNCHER -n N /bin/true` (launcher cost alone).

  spawn_times.py [--prefix install] [--build build] [--hydra PATH]
                 [--sizes 1,4,16] [--reps 5]

Weft's spawn returns once every child has exec'ed; hydra's returns when its
proxies accepted the request (it does not wait for the children), so the two
spawn columns measure different things. Prints markdown tables of medians.
"""
import argparse
import os
import re
import statistics
import subprocess
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="install")
    ap.add_argument("--build", default="build")
    ap.add_argument("--hydra", default="/work/main/.venv-peers/bin/mpiexec.hydra")
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    weft = os.path.join(a.prefix, "bin", "mpiexec")
    probe = os.path.join(a.build, "tests", "launcher", "pmi_dynproc_probe")
    launchers = {"weft": weft}
    if os.path.exists(a.hydra):
        launchers["hydra"] = a.hydra
    sizes = [int(x) for x in a.sizes.split(",")]
    print("| children | " + " | ".join(f"{k} spawn (ms)" for k in launchers) + " |")
    print("|---|" + "---|" * len(launchers))
    for n in sizes:
        res = {k: [] for k in launchers}
        for _ in range(a.reps):
            for k, m in launchers.items():
                p = subprocess.run([m, "-n", "1", probe, "spawn", str(n), probe, "0", "0", "0"],
                                   capture_output=True, text=True, timeout=120,
                                   stdin=subprocess.DEVNULL)
                t = re.search(r"op=spawn usec=(\d+) rc=0 ", p.stdout)
                if p.returncode != 0 or t is None:
                    raise SystemExit(f"{k}: spawn of {n} failed: {p.stdout}{p.stderr}")
                res[k].append(int(t.group(1)) / 1000)
        print(f"| {n} | " + " | ".join(f"{statistics.median(res[k]):.1f}" for k in launchers)
              + " |")
    print()
    print("| N | " + " | ".join(f"{k} -n N true (ms)" for k in launchers) + " |")
    print("|---|" + "---|" * len(launchers))
    for n in (2, 8, 32, 64):
        res = {k: [] for k in launchers}
        for _ in range(a.reps):
            for k, m in launchers.items():
                t0 = time.monotonic()
                subprocess.run([m, "-n", str(n), "/bin/true"], capture_output=True,
                               stdin=subprocess.DEVNULL, timeout=120, check=True)
                res[k].append((time.monotonic() - t0) * 1000)
        print(f"| {n} | " + " | ".join(f"{statistics.median(res[k]):.0f}" for k in launchers)
              + " |")


if __name__ == "__main__":
    main()
