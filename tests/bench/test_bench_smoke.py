# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Smoke tests for weft-bench: every benchmark runs with tiny sizes, few
iterations and -c validation, exits 0 (77 is accepted where a library may
report a function as unsupported) and prints well-formed output. Nothing
here looks at the numbers.

Environment:
  WEFT_BENCH_LAUNCHER  launcher command (default <repo>/install/bin/mpirun),
                       e.g. "/path/to/mpiexec" for MPICH
  WEFT_BENCH_LIBDIR    directory with libmpi_abi.so.1 (default <repo>/install/lib)
  WEFT_BENCH_BINDIR    benchmark binaries (default: found in the build/install
                       trees, else built here from bench/ with CMake)
  WEFT_BENCH_COLL_NPS  process counts for collectives (default "2,4,8")
  WEFT_BENCH_TIMEOUT   seconds per run (default 180)
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH_SRC = os.path.join(REPO, "bench")
DRIVER = os.path.join(BENCH_SRC, "weft-bench")
LAUNCHER = os.environ.get("WEFT_BENCH_LAUNCHER", os.path.join(REPO, "install", "bin", "mpirun"))
LIBDIR = os.environ.get("WEFT_BENCH_LIBDIR", os.path.join(REPO, "install", "lib"))
TIMEOUT = float(os.environ.get("WEFT_BENCH_TIMEOUT", "180"))
COLL_NPS = [int(x) for x in os.environ.get("WEFT_BENCH_COLL_NPS", "2,4,8").split(",") if x]
MISSING = 77

PT2PT = ["latency", "bw", "bibw", "multi_lat", "mbw_mr", "latency_mt"]
COLL = ["barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
        "allgather", "allgatherv", "alltoall", "alltoallv", "reduce_scatter",
        "reduce_scatter_block", "scan", "exscan"]
NBCOLL = ["i" + c for c in COLL]
RMA = ["put_latency", "get_latency", "put_bw", "get_bw", "put_bibw", "acc_latency",
       "get_acc_latency", "cas_latency", "fop_latency"]
OSH_PAIR = ["osh_put_latency", "osh_get_latency", "osh_put_bw", "osh_atomic_latency"]
OSH_COLL = ["osh_barrier", "osh_broadcast", "osh_reduce", "osh_fcollect"]
NOSIZE = {"barrier", "ibarrier", "cas_latency", "fop_latency", "init", "hello", "osh_atomic_latency",
          "osh_barrier"}
TINY = ["-i", "3", "-x", "1", "-c"]


def _launcher_ok():
    cmd = shlex.split(LAUNCHER)
    return bool(cmd) and (os.access(cmd[0], os.X_OK) or shutil.which(cmd[0]))


def _libdir_ok():
    return os.path.exists(os.path.join(LIBDIR, "libmpi_abi.so.1")) or \
        os.path.exists(os.path.join(LIBDIR, "libmpi_abi.so"))


@pytest.fixture(scope="session")
def bindir(tmp_path_factory):
    if not _launcher_ok():
        pytest.skip("launcher not found: %s (set WEFT_BENCH_LAUNCHER)" % LAUNCHER)
    if not _libdir_ok():
        pytest.skip("libmpi_abi.so.1 not found in %s (set WEFT_BENCH_LIBDIR)" % LIBDIR)
    env = os.environ.get("WEFT_BENCH_BINDIR")
    cands = [env] if env else [os.path.join(REPO, d, "libexec", "weft-bench")
                               for d in ("build/bench", "build-bench", "install")]
    for d in cands:
        if d and os.path.isfile(os.path.join(d, "latency")):
            return d
    if env:
        pytest.fail("WEFT_BENCH_BINDIR=%s has no benchmarks" % env)
    # build our own copy against the repository's mpi.h
    build = str(tmp_path_factory.mktemp("bench-build"))
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    cfg = subprocess.run(["cmake", "-S", BENCH_SRC, "-B", build, "-DMPI_LIB_DIR=" + LIBDIR,
                          "-DMPI_INCLUDE_DIR=" + os.path.join(REPO, "include")] + gen,
                         capture_output=True, text=True, timeout=300)
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    b = subprocess.run(["cmake", "--build", build], capture_output=True, text=True, timeout=600)
    assert b.returncode == 0, b.stdout + b.stderr
    return os.path.join(build, "libexec", "weft-bench")


def run_env():
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = LIBDIR + (":" + env["LD_LIBRARY_PATH"]
                                       if env.get("LD_LIBRARY_PATH") else "")
    return env


def mpirun(bindir, bench, np, opts, timeout=TIMEOUT):
    cmd = shlex.split(LAUNCHER) + ["-n", str(np), os.path.join(bindir, bench)] + list(opts)
    try:
        p = subprocess.run(cmd, env=run_env(), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail("%s timed out after %ss: %s\n%s" % (bench, timeout, " ".join(cmd),
                                                        (e.stdout or b"")[-3000:]))
    return p


def check_table(bench, out, validate=True, nrows_min=1):
    """The OSU-style table: '#' lines, one '# Size' header, numeric rows."""
    lines = [l for l in out.splitlines() if l.strip()]
    assert lines and lines[0].startswith("# weft-bench "), out
    assert any(l.startswith("# Library: ") for l in lines), out
    heads = [l for l in lines if l.startswith("# Size") or re.match(r"^#\s{5,}\S", l)]
    assert len(heads) == 1, out
    rows = [l for l in lines if not l.startswith("#")]
    assert len(rows) >= nrows_min, out
    for r in rows:
        toks = r.split()
        if validate:
            assert toks[-1] == "Pass", "validation column: " + r
            toks = toks[:-1]
        if bench not in NOSIZE:
            assert re.fullmatch(r"\d+", toks[0]), r
        for t in toks:
            float(t)
    return rows


def assert_ok(p, bench, allow_missing=False):
    if allow_missing and p.returncode == MISSING:
        assert re.search(r"^# %s: \S+ not supported by this library" % re.escape(bench),
                         p.stdout + p.stderr, re.M), p.stdout + p.stderr
        pytest.skip("%s: reported as not supported (exit 77)" % bench)
    assert p.returncode == 0, "exit %d\n%s\n%s" % (p.returncode, p.stdout, p.stderr)


# ------------------------------------------------------------------ pt2pt


@pytest.mark.parametrize("bench", PT2PT)
def test_pt2pt(bindir, bench):
    p = mpirun(bindir, bench, 2, ["-m", "0:4K"] + TINY)
    assert_ok(p, bench, allow_missing=(bench == "latency_mt"))
    check_table(bench, p.stdout, nrows_min=12)


@pytest.mark.parametrize("bench", ["multi_lat", "mbw_mr"])
def test_pt2pt_pairs_np4(bindir, bench):
    p = mpirun(bindir, bench, 4, ["-m", "1:1K", "-f"] + TINY)
    assert_ok(p, bench)
    check_table(bench, p.stdout)


def test_bw_window_and_large(bindir):
    p = mpirun(bindir, "bw", 2, ["-m", "256K:1M", "-W", "8", "-i", "2", "-x", "1", "-c"])
    assert_ok(p, "bw")
    assert len(check_table("bw", p.stdout)) == 3


def test_latency_mt_threads(bindir):
    p = mpirun(bindir, "latency_mt", 2, ["-m", "1:64", "-t", "4"] + TINY)
    assert_ok(p, "latency_mt", allow_missing=True)
    check_table("latency_mt", p.stdout)


# ------------------------------------------------------------ collectives


@pytest.mark.parametrize("np", COLL_NPS)
@pytest.mark.parametrize("bench", COLL + NBCOLL)
def test_collective(bindir, bench, np):
    opts = TINY if bench in NOSIZE else ["-m", "1:512"] + TINY
    p = mpirun(bindir, bench, np, opts)
    assert_ok(p, bench)
    check_table(bench, p.stdout)


VARIANTS = [
    ("reduce", ["-r", "1", "-I", "-d", "double"]),
    ("allreduce", ["-I", "-d", "float", "-f"]),
    ("allreduce", ["-d", "char"]),
    ("bcast", ["-r", "2", "-d", "int"]),
    ("gather", ["-r", "3", "-I"]),
    ("gatherv", ["-r", "1", "-I"]),
    ("scatter", ["-r", "2", "-I"]),
    ("scatterv", ["-r", "1"]),
    ("allgather", ["-I"]),
    ("allgatherv", ["-I", "-d", "double"]),
    ("alltoall", ["-I"]),
    ("alltoallv", ["-I", "-d", "int"]),
    ("reduce_scatter", ["-I"]),
    ("reduce_scatter_block", ["-I", "-d", "double"]),
    ("scan", ["-I"]),
    ("exscan", ["-I", "-d", "int"]),
    ("iallreduce", ["-I", "-f"]),
    ("ireduce", ["-r", "3", "-I"]),
    ("igatherv", ["-r", "2"]),
    ("ialltoall", ["-I"]),
]


@pytest.mark.parametrize("bench,extra", VARIANTS, ids=["%s%s" % (b, "".join(e)) for b, e in VARIANTS])
def test_collective_variants_np4(bindir, bench, extra):
    p = mpirun(bindir, bench, 4, ["-m", "4:1K"] + TINY + extra)
    assert_ok(p, bench)
    check_table(bench, p.stdout)


def test_nonblocking_columns(bindir):
    p = mpirun(bindir, "iallreduce", 2, ["-m", "4:64", "-f"] + TINY)
    assert_ok(p, "iallreduce")
    head = [l for l in p.stdout.splitlines() if l.startswith("# Size")][0]
    for col in ("Overall(us)", "Compute(us)", "Pure Comm.(us)", "Overlap(%)", "Iterations"):
        assert col in head
    for row in check_table("iallreduce", p.stdout):
        overlap = float(row.split()[4])
        assert 0.0 <= overlap <= 100.0


# ---------------------------------------------------------------- one-sided


@pytest.mark.parametrize("bench", RMA)
def test_rma(bindir, bench):
    opts = TINY if bench in NOSIZE else ["-m", "1:4K"] + TINY
    p = mpirun(bindir, bench, 2, opts)
    assert_ok(p, bench, allow_missing=True)
    check_table(bench, p.stdout)


@pytest.mark.parametrize("sync", ["flush", "lock", "lock_all", "fence", "pscw"])
@pytest.mark.parametrize("bench", ["put_latency", "get_bw", "acc_latency", "fop_latency"])
def test_rma_sync_modes(bindir, bench, sync):
    opts = ["-s", sync, "-w", "create" if sync in ("lock", "pscw") else "allocate"] + TINY
    if bench not in NOSIZE:
        opts = ["-m", "4:256"] + opts
    p = mpirun(bindir, bench, 2, opts)
    assert_ok(p, bench, allow_missing=True)
    check_table(bench, p.stdout)


# --------------------------------------------------------------- OpenSHMEM


def _osh_built(bindir, bench):
    if not os.path.isfile(os.path.join(bindir, bench)):
        pytest.skip("%s not built (OpenSHMEM benchmarks need Weft's shmem.h)" % bench)


@pytest.mark.parametrize("bench", OSH_PAIR)
def test_shmem_pair(bindir, bench):
    _osh_built(bindir, bench)
    opts = TINY if bench in NOSIZE else ["-m", "1:64K"] + TINY
    p = mpirun(bindir, bench, 2, opts)
    assert_ok(p, bench)
    check_table(bench, p.stdout)


@pytest.mark.parametrize("np", [2, 3, 8])
@pytest.mark.parametrize("bench", OSH_COLL)
def test_shmem_collective(bindir, bench, np):
    _osh_built(bindir, bench)
    opts = TINY if bench in NOSIZE else ["-m", "1:4K"] + TINY
    p = mpirun(bindir, bench, np, opts)
    assert_ok(p, bench)
    check_table(bench, p.stdout)


# ------------------------------------------------------------------ MPI-IO

IO = ["io_contig", "io_interleaved", "io_strided"]


@pytest.mark.parametrize("np", [1, 2, 3])
@pytest.mark.parametrize("bench", IO)
def test_io(bindir, bench, np, tmp_path):
    env_dir = os.environ.get("WB_IO_DIR")
    os.environ["WB_IO_DIR"] = str(tmp_path)
    try:
        p = mpirun(bindir, bench, np, ["-m", "1K:16K"] + TINY)
    finally:
        if env_dir is None:
            os.environ.pop("WB_IO_DIR")
        else:
            os.environ["WB_IO_DIR"] = env_dir
    assert_ok(p, bench, allow_missing=True)
    assert len(check_table(bench, p.stdout)) == 5
    assert not list(tmp_path.iterdir()), "benchmark left files behind"


# ------------------------------------------------------------------ startup


def test_init(bindir, tmp_path):
    js = tmp_path / "init.json"
    p = mpirun(bindir, "init", 2, ["--json", str(js)])
    assert_ok(p, "init")
    assert re.search(r"^nprocs: 2, min: [\d.]+ ms, max: [\d.]+ ms, avg: [\d.]+ ms$", p.stdout,
                     re.M), p.stdout
    doc = json.loads(js.read_text())
    assert doc["records"][0]["nprocs"] == 2 and doc["records"][0]["size"] is None


def test_hello(bindir):
    p = mpirun(bindir, "hello", 2, ["-f"])
    assert_ok(p, "hello")
    assert "This is a test with 2 processes" in p.stdout
    assert p.stdout.count("Hello from rank") == 2


# ---------------------------------------------------------- options, files


def test_csv_json(bindir, tmp_path):
    js, cs = tmp_path / "l.json", tmp_path / "l.csv"
    p = mpirun(bindir, "latency", 2, ["-m", "1:16", "--json", str(js), "--csv", str(cs)] + TINY)
    assert_ok(p, "latency")
    doc = json.loads(js.read_text())
    assert doc["benchmark"] == "latency" and doc["nprocs"] == 2 and doc["library"]
    sizes = [r["size"] for r in doc["records"]]
    assert sizes == [1, 2, 4, 8, 16]
    for r in doc["records"]:
        assert r["benchmark"] == "latency" and r["library"] == doc["library"]
        assert r["latency_us"] > 0 and r["validation"] == "pass"
    rows = cs.read_text().splitlines()
    assert rows[0].startswith("benchmark,library,nprocs,size,latency_us")
    assert len(rows) == 6


@pytest.mark.parametrize("opts", [["--bogus"], ["-m", "x"], ["-W", "4"], ["-m", "8:4"],
                                  ["extra-arg"]])
def test_bad_options_exit_2(bindir, opts):
    p = mpirun(bindir, "latency", 2, opts, timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr


def test_median_statistic(bindir, tmp_path):
    """--median reports each rank's median iteration time, says so in the header and
    the JSON; it needs a barrier per iteration, so -B and the non-blocking forms refuse it."""
    js = tmp_path / "b.json"
    p = mpirun(bindir, "bcast", 3, ["-m", "4:64", "--median", "--json", str(js)] + TINY)
    assert_ok(p, "bcast")
    assert "# Statistic: each rank's median iteration time" in p.stdout
    assert len(check_table("bcast", p.stdout)) == 5
    doc = json.loads(js.read_text())
    assert doc["statistic"] == "median" and all(r["avg_latency_us"] > 0 for r in doc["records"])
    for bench, extra in (("bcast", ["-B"]), ("ibcast", []), ("latency", [])):
        p = mpirun(bindir, bench, 2, ["--median"] + extra, timeout=60)
        assert p.returncode == 2, p.stdout + p.stderr
        assert "--median" in p.stderr


def test_help(bindir):
    p = mpirun(bindir, "allreduce", 2, ["-h"], timeout=60)
    assert p.returncode == 0 and "Usage: allreduce" in p.stdout


def test_wrong_np_exit_2(bindir):
    p = mpirun(bindir, "latency", 4, TINY, timeout=120)
    assert p.returncode == 2, p.stdout + p.stderr


# --------------------------------------------------------- driver, limits


def test_driver_run(bindir, tmp_path):
    js = tmp_path / "bw.json"
    cmd = [sys.executable, DRIVER, "run", "bw", "-n", "2", "--bin-dir", bindir, "--launcher",
           LAUNCHER, "--lib-dir", LIBDIR, "--timeout", str(TIMEOUT), "--", "-m", "1:64",
           "--json", str(js)] + TINY
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT + 30)
    assert p.returncode == 0, p.stdout + p.stderr
    check_table("bw", p.stdout)
    assert len(json.loads(js.read_text())["records"]) == 7


def test_driver_compare_sizeless(bindir, tmp_path):
    """compare passes -m to the benchmarks that take sizes only: barrier
    rejects it, and used to fail the whole comparison's barrier rows."""
    out = tmp_path / "cmp"
    prefix = os.path.dirname(LIBDIR)
    if not os.access(os.path.join(prefix, "bin", "mpirun"), os.X_OK):
        pytest.skip("no Weft install at %s to compare with itself" % prefix)
    cmd = [sys.executable, DRIVER, "compare", "--a", "weft:" + prefix, "--peer", "weft:" + prefix,
           "--bin-dir", bindir, "--bench", "barrier,bcast", "-n", "2", "--rounds", "1",
           "--no-plot", "--out-dir", str(out), "--timeout", str(TIMEOUT), "--", "-m", "1:8"] + TINY
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=4 * TIMEOUT)
    assert p.returncode == 0, p.stdout + p.stderr
    md = (out / "compare.md").read_text()
    assert "failed" not in md, md
    for bench, rows in (("barrier", 1), ("bcast", 4)):
        section = md.split("### " + bench + "\n", 1)[1].split("###", 1)[0]
        assert len(re.findall(r"^\| [0-9-]", section, re.M)) == rows, section


def test_driver_list(bindir):
    p = subprocess.run([sys.executable, DRIVER, "list", "--bin-dir", bindir],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0
    names = p.stdout.split()
    for b in PT2PT + COLL + NBCOLL + RMA + IO + ["init", "hello", "limit_pingpong"]:
        assert b in names


def test_limits(bindir, tmp_path):
    p = subprocess.run([os.path.join(bindir, "limit_pingpong"), "-i", "2000", "--json",
                        str(tmp_path / "pp.json")], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert re.search(r"^one-way\s+[\d.]+$", p.stdout, re.M), p.stdout
    assert json.loads((tmp_path / "pp.json").read_text())["records"][0]["latency_us"] > 0
    p = subprocess.run([os.path.join(bindir, "limit_pingpong"), "-i", "2000", "--lines", "2",
                        "--json", str(tmp_path / "pp2.json")], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert "one line per direction" in p.stdout, p.stdout
    rec = json.loads((tmp_path / "pp2.json").read_text())["records"][0]
    assert rec["lines"] == 2 and rec["latency_us"] > 0
    p = subprocess.run([os.path.join(bindir, "limit_pingpong"), "--lines", "3"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--lines takes 1 or 2" in p.stderr
    p = subprocess.run([os.path.join(bindir, "limit_copy_bw"), "-m", "64:4K", "--json",
                        str(tmp_path / "cb.json")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert len(json.loads((tmp_path / "cb.json").read_text())["records"]) == 7


def test_plot_if_matplotlib(bindir, tmp_path):
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        pytest.skip("matplotlib not importable here (weft-bench plot installs it on first use)")
    js = tmp_path / "l.json"
    p = mpirun(bindir, "latency", 2, ["-m", "1:64", "--json", str(js)] + TINY)
    assert_ok(p, "latency")
    out = tmp_path / "l.png"
    p = subprocess.run([sys.executable, DRIVER, "plot", str(js), "-o", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert out.stat().st_size > 1000


STUB = r"""
typedef struct MPI_ABI_Win *MPI_Win;
int MPI_Win_allocate(long size, int disp, void *info, void *comm, void *base, MPI_Win *win)
{
    (void)size; (void)disp; (void)info; (void)comm; (void)base; (void)win;
    return 55; /* MPI_ERR_UNSUPPORTED_OPERATION in the MPI-5 ABI */
}
"""


def test_unsupported_exits_77(bindir, tmp_path):
    """A library answering MPI_ERR_UNSUPPORTED_OPERATION gives exit 77 and
    the standard line, never numbers (simulated with an LD_PRELOAD stub)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src, so = tmp_path / "stub.c", tmp_path / "stub.so"
    src.write_text(STUB)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True, timeout=60)
    env = run_env()
    env["LD_PRELOAD"] = str(so)
    cmd = shlex.split(LAUNCHER) + ["-n", "2", os.path.join(bindir, "put_latency"), "-m", "1:8"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == MISSING, p.stdout + p.stderr
    assert "# put_latency: MPI_Win_allocate not supported by this library" in p.stdout
    assert not [l for l in p.stdout.splitlines() if l and not l.startswith("#")]
