#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Launcher A/B on a loaded machine: several launch commands run the same
program, interleaved run by run (so a load change hits every candidate), and
for each the median wall time and the median CPU time of the whole job (user
+ sys of mpirun, its proxies and ranks: getrusage(RUSAGE_CHILDREN) deltas,
which counts every waited-for descendant; less noisy than wall time when
other work shares the cores).

  launcher_ab.py [--reps 20] [--sizes 1,2,4] [--prog PATH] NAME=COMMAND ...

COMMAND is a launcher command line without -n (split on spaces), e.g.
  old=/tmp/old-install/bin/mpirun  new=install/bin/mpirun
  exec='env WEFT_LOCAL_PROXY_EXEC=1 install/bin/mpirun'
  hydra='env LD_LIBRARY_PATH=install/lib ~/.cache/weft-bench/venv-mpich/bin/mpiexec.hydra'
The program defaults to install/libexec/weft-bench/hello; /bin/true measures
the launcher alone. In --prog, {prefix} stands for each candidate's install
prefix (its launcher's ../), so two installs each run their own build:
  --prog '{prefix}/libexec/weft-bench/init' old=/tmp/base/bin/mpirun new=install/bin/mpirun
With weft-bench init as the program, the time in MPI_Init (mean over ranks)
gets a column too. Prints one markdown table per size, with the load average.
"""
import re
import argparse
import os
import resource
import statistics
import subprocess
import time


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--sizes", default="1,2,4")
    ap.add_argument("--prog", default="install/libexec/weft-bench/hello")
    ap.add_argument("cands", nargs="+", metavar="NAME=COMMAND")
    a = ap.parse_args()
    cands = []
    for c in a.cands:
        name, cmd = c.split("=", 1)
        cands.append((name, [os.path.expanduser(w) for w in cmd.split()]))
    for n in [int(s) for s in a.sizes.split(",")]:
        wall = {k: [] for k, _ in cands}
        cpu = {k: [] for k, _ in cands}
        init = {k: [] for k, _ in cands}
        load0 = os.getloadavg()[0]
        for _ in range(a.reps):
            for name, cmd in cands:
                prefix = os.path.dirname(os.path.dirname(os.path.abspath(cmd[-1])))
                c0, t0 = cpu_children(), time.monotonic()
                p = subprocess.run(cmd + ["-n", str(n), a.prog.replace("{prefix}", prefix)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, timeout=120)
                wall[name].append((time.monotonic() - t0) * 1e3)
                cpu[name].append((cpu_children() - c0) * 1e3)
                if p.returncode != 0:
                    raise SystemExit(f"{name}: {' '.join(cmd)} -n {n} failed ({p.returncode}): "
                                     f"{p.stderr.decode(errors='replace')[:300]}")
                m = re.search(r"avg: ([0-9.]+) ms", p.stdout.decode(errors="replace"))
                if m:
                    init[name].append(float(m.group(1)))
        load1 = os.getloadavg()[0]
        has_init = all(init[k] for k, _ in cands)
        print(f"\nN = {n}, {os.path.basename(a.prog)}, {a.reps} runs each, interleaved; "
              f"load average {load0:.1f} -> {load1:.1f}\n")
        print("| launcher | wall median (ms) | wall min (ms) | job CPU median (ms) |" +
              (" MPI_Init median [min-max] (ms) |" if has_init else ""))
        print("|---|---|---|---|" + ("---|" if has_init else ""))
        for name, _ in cands:
            row = (f"| {name} | {statistics.median(wall[name]):.2f} | {min(wall[name]):.2f} | "
                   f"{statistics.median(cpu[name]):.2f} |")
            if has_init:
                row += (f" {statistics.median(init[name]):.2f} [{min(init[name]):.2f}-"
                        f"{max(init[name]):.2f}] |")
            print(row)


if __name__ == "__main__":
    main()
