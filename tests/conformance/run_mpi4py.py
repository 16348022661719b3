#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""mpi4py conformance job: build mpi4py from source against Weft and run
mpi4py's own test suite under Weft's mpirun at several process counts.

Steps (each printed as it runs):
  1. venv + `pip install --no-binary mpi4py mpi4py==4.1.2` with
     MPICC=<prefix>/bin/mpicc, cached under the work directory and rebuilt
     when <prefix>/include/mpi.h (or the prefix, Python or mpi4py version)
     changes;
  2. checks: the extension module links <prefix>/lib/libmpi_abi.so.1 (ldd),
     mpi4py saw the standard ABI (MPI_ABI_VERSION), and
     MPI.Get_library_version() starts with "Weft";
  3. the README example under `mpirun -n 4`;
  4. mpi4py's test/ folder (from the same sdist) under `mpirun -n N` for each
     N, one record file per rank (mpi4py_harness.py), compared with the
     expected-failures file mpi4py_xfail.txt.

The job fails on a failure not listed, on a listed test that passes (the list
only shrinks), on a crash or a timeout. Counts per process count are printed
at the end.

Only the standard library is used; run with any Python 3.8+:
    python3 tests/conformance/run_mpi4py.py [--np 1,2,3] [-i REGEX] ...
Environment: WEFT_PREFIX (default <repo>/install), WEFT_MPI4PY_WORKDIR
(default tests/conformance/.mpi4py), WEFT_MPI4PY_NP, WEFT_MPI4PY_TIMEOUT.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
import tarfile
import time
from pathlib import Path

MPI4PY_VERSION = "4.1.2"
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
# per-run timeouts (seconds) by process count; others use the last one
DEFAULT_TIMEOUTS = {1: 180, 2: 240, 3: 300}
# the example the README shows
EXAMPLE = ("from mpi4py import MPI; c = MPI.COMM_WORLD; "
           "print(c.rank, c.size, c.allreduce(c.rank))")


def log(msg=""):
    print(msg, flush=True)


def die(msg):
    log(f"run_mpi4py: error: {msg}")
    sys.exit(2)


def run(cmd, **kw):
    return subprocess.run(cmd, check=False, **kw)


# ---------------------------------------------------------------- setup

def cache_key(prefix):
    h = hashlib.sha256()
    h.update((prefix / "include" / "mpi.h").read_bytes())
    h.update(str(prefix.resolve()).encode())
    h.update(MPI4PY_VERSION.encode())
    h.update(sys.version.encode())
    h.update(sys.base_prefix.encode())
    return h.hexdigest()[:20]


def venv_python(venv):
    return venv / "bin" / "python"


def fetch_sdist(work):
    dist = work / "dist"
    sdist = dist / f"mpi4py-{MPI4PY_VERSION}.tar.gz"
    if not sdist.exists():
        dist.mkdir(parents=True, exist_ok=True)
        log(f"== downloading the mpi4py {MPI4PY_VERSION} source distribution")
        r = run([sys.executable, "-m", "pip", "download", "-q", "--no-binary", ":all:",
                 "--no-deps", "--no-cache-dir", "-d", str(dist), f"mpi4py=={MPI4PY_VERSION}"])
        if r.returncode != 0 or not sdist.exists():
            die("pip download of the mpi4py sdist failed")
    return sdist


def unpack_tests(work, sdist):
    """The sdist's test/ folder plus the .pyx sources (to name the MPI call
    behind a failure), unpacked fresh each time."""
    src = work / f"mpi4py-{MPI4PY_VERSION}"
    if src.exists():
        shutil.rmtree(src)
    top = f"mpi4py-{MPI4PY_VERSION}/"
    with tarfile.open(sdist) as tf:
        members = [m for m in tf.getmembers()
                   if m.name.startswith(top + "test/") or m.name.startswith(top + "src/mpi4py/")
                   and m.name.endswith((".pyx", ".pxi"))]
        for m in members:
            if not (m.isfile() or m.isdir()):
                continue
            tf.extract(m, work)
    return src


def build_venv(work, prefix, sdist, key, rebuild=False):
    venv = work / "venv"
    stamp = venv / ".weft-cache-key"
    if not rebuild and stamp.exists() and stamp.read_text().strip() == key \
            and venv_python(venv).exists():
        log(f"== mpi4py {MPI4PY_VERSION}: cached build in {venv} (key {key})")
        return venv
    if venv.exists():
        log("== mpi4py: include/mpi.h or the toolchain changed; rebuilding")
        shutil.rmtree(venv)
    log(f"== mpi4py {MPI4PY_VERSION}: building from source with MPICC={prefix}/bin/mpicc"
        " (a few minutes)")
    t0 = time.monotonic()
    r = run([sys.executable, "-m", "venv", str(venv)])
    if r.returncode != 0:
        die("python -m venv failed")
    env = dict(os.environ)
    env.update({
        "MPICC": str(prefix / "bin" / "mpicc"),
        # One 280k-line C file: -O1 without debug info halves the build time.
        "CFLAGS": env.get("WEFT_MPI4PY_CFLAGS", "-O1 -g0"),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    })
    # --no-cache-dir: pip would otherwise reuse a wheel built against an
    # older mpi.h. Installing the downloaded sdist is `--no-binary mpi4py
    # mpi4py==4.1.2` without a second download, and the test folder matches.
    logf = work / "build.log"
    with open(logf, "w") as out:
        r = run([str(venv_python(venv)), "-m", "pip", "install", "-v", "--no-cache-dir",
                 "--no-binary", "mpi4py", str(sdist)], env=env, stdout=out,
                stderr=subprocess.STDOUT)
    if r.returncode != 0:
        sys.stdout.write(logf.read_text()[-6000:])
        die(f"building mpi4py failed (log: {logf})")
    text = logf.read_text()
    if "checking for MPI ABI support" not in text:
        log("warning: the build log does not show mpi4py's MPI ABI check")
    stamp.write_text(key + "\n")
    log(f"   built in {time.monotonic() - t0:.0f}s (log: {logf})")
    return venv


def check_build(venv, prefix):
    py = str(venv_python(venv))
    code = ("import mpi4py, mpi4py.MPI as M, json; "
            "print(json.dumps([M.__file__, M.Get_library_version(), M.Get_version(), "
            "M.Get_abi_version() if hasattr(M, 'Get_abi_version') else None, "
            "mpi4py.get_config()]))")
    r = run([py, "-c", code], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        die(f"importing mpi4py.MPI failed (singleton init):\n{r.stdout}{r.stderr}")
    modfile, libver, version, abiver, _config = json.loads(r.stdout.strip().splitlines()[-1])
    ldd = run(["ldd", modfile], capture_output=True, text=True).stdout
    want = (prefix / "lib" / "libmpi_abi.so.1").resolve()
    m = re.search(r"^\s*libmpi_abi\.so\.1 => (\S+)", ldd, re.M)
    if not m:
        die(f"{modfile} does not link libmpi_abi.so.1:\n{ldd}")
    if Path(m.group(1)).resolve() != want:
        die(f"{modfile} resolves libmpi_abi.so.1 to {m.group(1)}, not {want}")
    others = [ln.strip() for ln in ldd.splitlines()
              if re.search(r"lib(mpi|mpich|open-rte|open-pal)[^_]", ln)]
    if others:
        die(f"{modfile} links another MPI library: {others}")
    first = libver.splitlines()[0] if libver else ""
    if not libver.startswith("Weft"):
        die(f"MPI.Get_library_version() is {first!r}, not Weft")
    if abiver is not None and tuple(abiver)[0] < 1:
        die(f"MPI.Get_abi_version() is {abiver}: not built for the standard ABI")
    log(f"   mpi4py.MPI links {m.group(1)}")
    log(f"   MPI.Get_library_version(): {first}")
    log(f"   MPI.Get_version(): {tuple(version)}, ABI version: {tuple(abiver) if abiver else '?'}")


def check_example(venv, prefix, np_=4, timeout=120):
    """The README example, run the way a user types it."""
    cmd = [str(prefix / "bin" / "mpirun"), "-n", str(np_), str(venv_python(venv)),
           "-c", EXAMPLE]
    log(f"== README example: mpirun -n {np_} python -c \"{EXAMPLE}\"")
    try:
        r = run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        log(f"   FAILED: timed out after {timeout}s")
        return False
    lines = sorted(r.stdout.split("\n"), key=lambda s: s)
    want = sorted(f"{i} {np_} {np_ * (np_ - 1) // 2}" for i in range(np_))
    got = sorted(ln.strip() for ln in lines if ln.strip())
    for ln in got:
        log(f"   {ln}")
    if r.returncode != 0 or got != want:
        log(f"   FAILED (exit {r.returncode}); expected lines {want}")
        if r.stderr:
            log("   stderr:\n" + "\n".join("     " + x for x in r.stderr.splitlines()[-15:]))
        return False
    log("   ok")
    return True


# ---------------------------------------------------------------- xfail file

XFAIL_HEADER = """\
# mpi4py 4.1.2 tests expected to fail on Weft, read by run_mpi4py.py.
#
#   xfail TEST_ID [np=N,..] REASON   the test fails (at those process counts);
#                                    the job fails if it passes: delete the line
#   skip  PATTERN [np=N,..] REASON   not run at all (mpi4py's -x fnmatch
#                                    pattern): the test hangs or kills the run
#
# REASON names the missing MPI function ("MPI_X not implemented": Weft
# returns MPI_ERR_UNSUPPORTED_OPERATION); "bug:" marks a failure that is not
# a missing feature (a "bug?" reason is generated and wants a look). Regenerate
# with run_mpi4py.py --regen-xfail, which keeps the skip lines and the reasons
# of tests that still fail; then review the new reasons.
"""

class XfailEntry:
    def __init__(self, kind, pattern, nps, reason, lineno):
        self.kind, self.pattern, self.nps, self.reason, self.lineno = \
            kind, pattern, nps, reason, lineno

    def applies(self, np_):
        return self.nps is None or np_ in self.nps


def parse_xfail(path):
    """Lines:  KIND  TEST_ID  [np=1,2]  REASON...
    KIND xfail: TEST_ID (exact, e.g. test_rma.TestRMASelf.testPutGet) is
      expected to fail; it must not pass.
    KIND skip: TEST_ID is an fnmatch pattern of tests not run at all (passed
      to mpi4py's runner as -x), for tests that hang or crash the run.
    np=LIST limits the entry to those process counts. # starts a comment line."""
    entries = []
    if not path.exists():
        return entries
    for i, line in enumerate(path.read_text().splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split(None, 2)
        if len(parts) < 2 or parts[0] not in ("xfail", "skip"):
            die(f"{path}:{i}: expected 'xfail|skip TEST_ID [np=N,..] reason'")
        kind, pattern = parts[0], parts[1]
        rest = parts[2] if len(parts) > 2 else ""
        nps = None
        m = re.match(r"np=([\d,]+)\s*(.*)$", rest)
        if m:
            nps = {int(x) for x in m.group(1).split(",") if x}
            rest = m.group(2)
        if not rest:
            die(f"{path}:{i}: an entry needs a reason")
        entries.append(XfailEntry(kind, pattern, nps, rest, i))
    return entries


# ---------------------------------------------------------------- running

def read_records(outdir, np_):
    """Per-rank outcome maps, start-without-end ids, and the done flags."""
    ranks = []
    for r in range(np_):
        f = outdir / f"rank{r}.jsonl"
        outcomes, started, done, order = {}, set(), None, []
        if f.exists():
            for line in f.read_text(errors="replace").splitlines():
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if rec["ev"] == "start":
                    started.add(rec["id"])
                elif rec["ev"] == "end":
                    if rec["id"] not in outcomes:
                        outcomes[rec["id"]] = rec
                        order.append(rec["id"])
                    started.discard(rec["id"])
                elif rec["ev"] == "done":
                    done = rec["code"]
        ranks.append({"outcomes": outcomes, "open": started, "done": done, "order": order})
    return ranks


_PYX = {}


def _pyx_sources(srcdir):
    if srcdir not in _PYX:
        files = {}
        for f in sorted((srcdir / "src" / "mpi4py" / "MPI.src").glob("*.p*")):
            files[f.name] = f.read_text(errors="replace").splitlines()
        _PYX[srcdir] = files
    return _PYX[srcdir]


def _call_at(lines, n):
    """(MPI call on line n or just above, enclosing def name)."""
    call = None
    for text in lines[n - 1:n] + lines[max(0, n - 4):n - 1][::-1]:
        m = re.search(r"\b(MPI_[A-Z][A-Za-z0-9_]*)\s*\(", text)
        if m:
            call = m.group(1)
            break
    func = None
    for text in lines[max(0, n - 200):n][::-1]:
        m = re.match(r"\s*(?:async\s+)?(?:c?p?def|cdef inline)\s+(?:[\w\[\]\*, ]+\s+)?(\w+)\s*\(",
                     text)
        if m:
            func = m.group(1)
            break
    return call, func


def mpi_call_of(msg, srcdir):
    """Name the MPI function behind an mpi4py.MPI.Exception from the
    traceback's innermost frame in mpi4py's .pyx/.pxi sources: its line
    holds the CHKERR( MPI_Xxx(...) ) call. Cython shares traceback entries
    between functions on the same line number, so the file it names may be
    wrong: every source file is tried at that line, preferring the one whose
    enclosing function is named by the frame or by the Python line calling it."""
    frames = re.findall(r'File "(src/mpi4py/MPI\.src/[^"]+)", line (\d+), in (\S+)', msg)
    if not frames:
        return None, None
    path, line, func = frames[-1]
    n = int(line)
    hints = {func.rsplit(".", 1)[-1]}
    # the Python source line that called into mpi4py (the frame before)
    pylines = re.findall(r'File "[^"]+\.py", line \d+, in \S+\n\s+(.+)', msg)
    if pylines:
        hints |= set(re.findall(r"\.(\w+)\(", pylines[-1]))
    files = _pyx_sources(srcdir)
    cands = []
    named = Path(path).name
    for name, lines in files.items():
        call, enclosing = _call_at(lines, n)
        if call:
            score = (enclosing in hints) * 2 + (name == named)
            cands.append((score, call, enclosing))
    if not cands:
        return None, func
    cands.sort(key=lambda c: -c[0])
    if cands[0][0] == 0 and len({c[1] for c in cands}) > 1:
        return None, func
    return cands[0][1], func


def reason_of(rec, srcdir):
    msg = rec.get("msg", "")
    if rec["outcome"] == "hang":
        return "hang/crash: the run stopped inside this test"
    m = re.search(r"(MPI_[A-Za-z0-9_]+) is not implemented in Weft", msg)
    if m:
        return f"{m.group(1)} not implemented"
    m = re.search(r"mpi4py\.MPI\.Exception: (MPI_ERR_[A-Z_]+)", msg)
    if m:
        call, func = mpi_call_of(msg, srcdir)
        where = call or func or "?"
        if m.group(1) == "MPI_ERR_UNSUPPORTED_OPERATION":
            return f"{where} not implemented"
        return f"bug? {where} returned {m.group(1)}"
    if "NotImplementedError" in msg:
        call, func = mpi_call_of(msg, srcdir)
        return f"{call or func or '?'} not implemented (NotImplementedError)"
    last = [ln for ln in msg.strip().splitlines() if ln.strip()]
    tail = last[-1].strip() if last else rec["outcome"]
    tail = re.sub(r" at 0x[0-9a-f]+>", ">", tail)
    return "bug? " + tail[:150]


def merge(ranks, np_, timed_out):
    """Combine per-rank outcomes into one result per test id."""
    ids, seen = [], set()
    for rk in ranks:
        for tid in rk["order"] + sorted(rk["open"]):
            if tid not in seen:
                seen.add(tid)
                ids.append(tid)
    results = {}
    for tid in ids:
        recs = [rk["outcomes"].get(tid) for rk in ranks]
        opened = any(tid in rk["open"] for rk in ranks)
        bad = [r for r in recs if r and r["outcome"] in ("fail", "error")]
        if bad:
            res = dict(bad[0])
            res["outcome"] = "fail"
            res["ranks"] = [i for i, r in enumerate(recs) if r and r["outcome"] in ("fail", "error")]
        elif opened or any(r is None for r in recs):
            res = {"id": tid, "outcome": "hang", "timeout": timed_out,
                   "msg": "the run stopped inside this test"}
        elif all(r["outcome"] == "skip" for r in recs):
            res = dict(recs[0])
        else:
            res = dict(next(r for r in recs if r["outcome"] != "skip"))
            res["outcome"] = "ok"
        res["dt"] = max((r["dt"] for r in recs if r), default=0.0)
        results[tid] = res
    return results


def run_suite(np_, venv, prefix, srcdir, outdir, skips, includes, excludes, timeout):
    if outdir.exists():
        shutil.rmtree(outdir)
    outdir.mkdir(parents=True)
    cmd = [str(prefix / "bin" / "mpirun"), "-n", str(np_), "-timeout", str(timeout),
           str(venv_python(venv)), str(HERE / "mpi4py_harness.py"),
           str(outdir), str(srcdir / "test" / "main.py"), "--no-builddir", "-v"]
    for pat in skips:
        cmd += ["-x", pat]
    for rx in includes:
        cmd += ["-i", rx]
    for rx in excludes:
        cmd += ["-e", rx]
    env = dict(os.environ)
    env.setdefault("PYTHONFAULTHANDLER", "1")
    logf = outdir / "output.log"
    t0 = time.monotonic()
    timed_out = False
    with open(logf, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True, cwd=str(srcdir / "test"))
        try:
            rc = proc.wait(timeout=timeout + 60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            timed_out = True
    if rc == 124:
        timed_out = True
    dt = time.monotonic() - t0
    (outdir / "meta.json").write_text(json.dumps({"rc": rc, "timed_out": timed_out, "dt": dt}))
    ranks = read_records(outdir, np_)
    return rc, timed_out, dt, ranks, logf


def reuse_suite(np_, outdir):
    meta = json.loads((outdir / "meta.json").read_text())
    return meta["rc"], meta["timed_out"], meta["dt"], read_records(outdir, np_), \
        outdir / "output.log"


# ---------------------------------------------------------------- report

def evaluate(np_, results, entries, ranks, rc, timed_out, srcdir):
    xf = {e.pattern: e for e in entries if e.kind == "xfail" and e.applies(np_)}
    c = {"run": 0, "passed": 0, "failed": 0, "skipped": 0, "xfail": 0, "xpass": 0, "hang": 0}
    new_fail, xpass, hung = [], [], []
    for tid, res in results.items():
        c["run"] += 1
        o = res["outcome"]
        if o == "skip":
            c["skipped"] += 1
        elif o == "ok":
            if tid in xf:
                c["xpass"] += 1
                xpass.append((tid, xf[tid]))
            else:
                c["passed"] += 1
        elif o == "fail":
            if tid in xf:
                c["xfail"] += 1
            else:
                c["failed"] += 1
                new_fail.append(res)
        elif o == "hang":
            c["hang"] += 1
            hung.append(res)
    problems = []
    if timed_out:
        problems.append("the run timed out")
    elif rc != 0:
        problems.append(f"mpirun exited with code {rc} (crash or abort)")
    notdone = [i for i, rk in enumerate(ranks) if rk["done"] is None]
    if notdone and not timed_out:
        problems.append(f"ranks {notdone} did not finish the suite")
    if new_fail:
        problems.append(f"{len(new_fail)} failures not in the xfail list")
    if xpass:
        problems.append(f"{len(xpass)} listed tests passed: remove them from the xfail list")
    if hung:
        problems.append(f"{len(hung)} tests did not finish (hang or crash)")
    return c, new_fail, xpass, hung, problems


def write_xfail(path, all_results, nps, srcdir, entries):
    """Regenerate the xfail list from the results: one line per failing test,
    qualified by np when it does not fail at every process count it ran at.
    Keeps the skip entries."""
    fails = {}   # tid -> {np: reason}
    ran = {}     # tid -> set of nps where it ran (not skipped)
    for np_, results in all_results.items():
        for tid, res in results.items():
            if res["outcome"] in ("fail", "hang"):
                fails.setdefault(tid, {})[np_] = reason_of(res, srcdir)
            if res["outcome"] != "skip":
                ran.setdefault(tid, set()).add(np_)
    # a reason written by hand survives regeneration while the test fails
    kept = {e.pattern: e.reason for e in entries if e.kind == "xfail"}
    by_reason = {}
    for tid, per in fails.items():
        reasons = sorted(set(per.values()))
        reason = reasons[0] if len(reasons) == 1 else " / ".join(reasons)
        reason = kept.get(tid, reason)
        qual = "" if set(per) >= ran.get(tid, set()) else \
            "np=" + ",".join(str(n) for n in sorted(per))
        by_reason.setdefault(reason, []).append((tid, qual))
    lines = XFAIL_HEADER.rstrip("\n").splitlines()
    skips = [e for e in entries if e.kind == "skip"]
    if skips:
        lines += ["", "# not run: they hang or take the run down (kept by --regen-xfail)"]
        for e in skips:
            q = (" np=" + ",".join(map(str, sorted(e.nps)))) if e.nps else ""
            lines.append(f"skip {e.pattern}{q} {e.reason}")

    def sort_key(item):
        reason = item[0]
        return (reason.startswith(("bug", "mpi4py")), reason)
    for reason, items in sorted(by_reason.items(), key=sort_key):
        lines += ["", f"# {reason} ({len(items)})"]
        for tid, qual in sorted(items):
            lines.append(f"xfail {tid} {qual + ' ' if qual else ''}{reason}")
    path.write_text("\n".join(lines) + "\n")
    log(f"== wrote {path} ({sum(len(v) for v in by_reason.values())} xfail entries)")


def short(msg, n=12):
    lines = [ln for ln in msg.strip().splitlines() if ln.strip()]
    return "\n".join("      " + ln for ln in lines[-n:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", default=os.environ.get("WEFT_PREFIX", str(REPO / "install")))
    ap.add_argument("--workdir", default=os.environ.get("WEFT_MPI4PY_WORKDIR",
                                                        str(HERE / ".mpi4py")))
    ap.add_argument("--np", default=os.environ.get("WEFT_MPI4PY_NP", "1,2,3"),
                    help="comma-separated process counts (default 1,2,3)")
    ap.add_argument("--timeout", type=int, default=int(os.environ.get("WEFT_MPI4PY_TIMEOUT", 0)),
                    help="per-run timeout in seconds (default by np: 180/240/300)")
    ap.add_argument("--xfail", default=str(HERE / "mpi4py_xfail.txt"))
    ap.add_argument("-i", "--include", action="append", default=[],
                    help="only test modules matching REGEX (mpi4py's -i)")
    ap.add_argument("-e", "--exclude", action="append", default=[],
                    help="skip test modules matching REGEX (mpi4py's -e)")
    ap.add_argument("--setup-only", action="store_true",
                    help="build/check mpi4py and stop")
    ap.add_argument("--example-only", action="store_true",
                    help="build/check mpi4py, run the README example and stop")
    ap.add_argument("--no-example", action="store_true")
    ap.add_argument("--reuse", action="store_true",
                    help="do not run: evaluate the records of the previous run")
    ap.add_argument("--rebuild", action="store_true", help="ignore the cached build")
    ap.add_argument("--regen-xfail", action="store_true",
                    help="rewrite the xfail file from this run's failures")
    ap.add_argument("--slowest", type=int, default=5, help="list the N slowest tests per np")
    args = ap.parse_args()

    prefix = Path(args.prefix).resolve()
    for f in ("bin/mpicc", "bin/mpirun", "include/mpi.h", "lib/libmpi_abi.so.1"):
        if not (prefix / f).exists():
            die(f"{prefix / f} is missing: build and install Weft first (make)")
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    nps = [int(x) for x in args.np.split(",") if x.strip()]
    xfail_path = Path(args.xfail)
    entries = parse_xfail(xfail_path)

    t_start = time.monotonic()
    sdist = fetch_sdist(work)
    venv = build_venv(work, prefix, sdist, cache_key(prefix), args.rebuild)
    check_build(venv, prefix)
    if args.setup_only:
        return 0
    example_ok = True
    if args.reuse:
        srcdir = work / f"mpi4py-{MPI4PY_VERSION}"
    elif not args.no_example:
        example_ok = check_example(venv, prefix)
        if args.example_only:
            return 0 if example_ok else 1
    if not args.reuse:
        srcdir = unpack_tests(work, sdist)

    all_results, summary, failed_any = {}, [], False
    for np_ in nps:
        timeout = args.timeout or DEFAULT_TIMEOUTS.get(np_, DEFAULT_TIMEOUTS[max(DEFAULT_TIMEOUTS)])
        skips = [e.pattern for e in entries if e.kind == "skip" and e.applies(np_)]
        log(f"== mpi4py test suite: mpirun -n {np_} (timeout {timeout}s, "
            f"{len(skips)} skip patterns)")
        if args.reuse:
            rc, timed_out, dt, ranks, logf = reuse_suite(np_, work / f"np{np_}")
        else:
            rc, timed_out, dt, ranks, logf = run_suite(np_, venv, prefix, srcdir,
                                                       work / f"np{np_}", skips, args.include,
                                                       args.exclude, timeout)
        results = merge(ranks, np_, timed_out)
        all_results[np_] = results
        c, new_fail, xpass, hung, problems = evaluate(np_, results, entries, ranks, rc,
                                                      timed_out, srcdir)
        log(f"   {dt:.0f}s, mpirun exit {rc}; log: {logf}")
        for res in new_fail:
            ranks_s = ",".join(map(str, res.get("ranks", [])))
            log(f"   NEW FAILURE {res['id']} (rank {ranks_s}): {reason_of(res, srcdir)}")
            log(short(res.get("msg", ""), 8))
        for tid, e in xpass:
            log(f"   PASSED BUT LISTED {tid} (xfail line {e.lineno}: {e.reason})")
        for res in hung:
            log(f"   DID NOT FINISH {res['id']}")
        if args.slowest:
            slow = sorted(results.values(), key=lambda r: -r.get("dt", 0))[:args.slowest]
            log("   slowest: " + ", ".join(f"{r['id']} {r['dt']:.1f}s" for r in slow))
        if problems and not args.regen_xfail:
            failed_any = True
            log(f"   np={np_}: FAILED: " + "; ".join(problems))
        elif problems:
            log(f"   np={np_}: " + "; ".join(problems))
        summary.append((np_, c, problems))

    if args.regen_xfail:
        write_xfail(xfail_path, all_results, nps, srcdir, entries)

    log("")
    log("== mpi4py %s on Weft: summary (%.0fs)" % (MPI4PY_VERSION, time.monotonic() - t_start))
    log("   np   run  passed  failed  skipped  xfail  xpass  unfinished  pass-rate")
    for np_, c, problems in summary:
        denom = c["passed"] + c["failed"] + c["xfail"] + c["xpass"] + c["hang"]
        rate = 100.0 * (c["passed"] + c["xpass"]) / denom if denom else 0.0
        log(f"   {np_:<3} {c['run']:>5} {c['passed']:>7} {c['failed']:>7} {c['skipped']:>8} "
            f"{c['xfail']:>6} {c['xpass']:>6} {c['hang']:>11} {rate:>9.1f}%")
    if not example_ok:
        failed_any = True
        log("   README example: FAILED")
    verdict = "FAILED" if failed_any else "ok"
    log(f"== mpi4py conformance: {verdict}")
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
