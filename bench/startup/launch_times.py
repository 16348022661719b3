#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Startup cost of a job: median wall time of `LAUNCHER -n N hello` and the
mean time ranks spend in MPI_Init (weft-bench init), for several launchers
running the same Weft-built binaries.

  launch_times.py [--prefix install] [--hydra PATH] [--orterun PATH]
                  [--sizes 2,4,8,16,32,64] [--reps 5] [--hosts h1:16,h2:16]
                  [--env NAME=VALUE ...]

Launchers: Weft's mpirun; MPICH hydra (the Weft library speaks PMI-1/2 to
it); Open MPI's orterun/prterun, which only starts `true` (Weft has no PMIx
client yet, so no MPI program runs under it): launch cost only. A launcher
that is missing is reported and left out. Prints a markdown table.
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import time


def run(cmd, env, timeout=120):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[:300]}")
    return dt, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="install")
    ap.add_argument("--hydra", default="/work/main/.venv-peers/bin/mpiexec.hydra")
    ap.add_argument("--orterun", default=shutil.which("prterun") or shutil.which("orterun") or "")
    ap.add_argument("--sizes", default="2,4,8,16,32,64")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--hosts", default="", help="weft only: -hosts list (e.g. namespaces)")
    ap.add_argument("--env", action="append", default=[])
    a = ap.parse_args()
    prefix = os.path.abspath(a.prefix)
    hello = os.path.join(prefix, "libexec", "weft-bench", "hello")
    init = os.path.join(prefix, "libexec", "weft-bench", "init")
    env = dict(os.environ)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    launchers = {"weft": [os.path.join(prefix, "bin", "mpirun")] +
                 (["-hosts", a.hosts] if a.hosts else [])}
    if a.hosts:
        pass
    elif os.path.exists(a.hydra):
        launchers["hydra"] = [a.hydra]
    else:
        print(f"# hydra not found at {a.hydra}: left out")
    if a.orterun and not a.hosts:
        launchers["orte"] = [a.orterun, "--oversubscribe", "--allow-run-as-root"]
    elif not a.hosts:
        print("# no prterun/orterun: left out")
    print("| N | " + " | ".join(f"{k} hello wall (ms) | {k} MPI_Init avg (ms)"
                                 if k != "orte" else f"{k} `true` wall (ms)"
                                 for k in launchers) + " |")
    print("|---|" + "---|" * sum(2 if k != "orte" else 1 for k in launchers))
    for n in [int(x) for x in a.sizes.split(",")]:
        cells = []
        for name, cmd in launchers.items():
            if name == "orte":
                walls = [run(cmd + ["-n", str(n), "true"], env)[0] for _ in range(a.reps)]
                cells.append(f"{statistics.median(walls) * 1000:.0f}")
                continue
            walls = [run(cmd + ["-n", str(n), hello], env)[0] for _ in range(a.reps)]
            inits = []
            for _ in range(a.reps):
                out = run(cmd + ["-n", str(n), init], env)[1]
                m = re.search(r"avg: ([\d.]+) ms", out)
                inits.append(float(m.group(1)))
            cells += [f"{statistics.median(walls) * 1000:.0f}", f"{statistics.median(inits):.1f}"]
        print(f"| {n} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
