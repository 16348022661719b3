# SPDX-License-Identifier: BSD-3-Clause
"""Intra-node thresholds by measured cost (issue 18 item 6): a simulated slow
CMA (WEFT_SMP_CMA_EXTRA_COST) moves them, WEFT_TUNING_FILE rules override
them, a bad rules file fails MPI_Init naming the line, and weft-info --tuning
reports a choice. Values read through MPI_T by tests/mpi/p2p_thresholds.c,
which also checks the ranks agree and moves data across each threshold."""
import os
import re
import subprocess

from conftest import PREFIX, BUILD


def run(env, nprocs=2, expect_ok=True):
    prog = BUILD / "tests" / "mpi" / "p2p_thresholds"
    assert prog.exists(), f"{prog} not built"
    cmd = [str(PREFIX / "bin" / "mpirun"), "-n", str(nprocs), str(prog), "print"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **env))
    detail = f"env {env}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    if not expect_ok:
        assert proc.returncode != 0, detail
        return proc.stderr
    assert proc.returncode == 0 and "No Errors" in proc.stdout, detail
    m = re.search(r"thresholds eager_limit=(\d+) cma_threshold=(\d+) cma_ns=(\d+) copy_ns=(\d+)"
                  r" xcopy_ns=\d+ coop_threshold=(\d+)", proc.stdout)
    assert m, detail
    return dict(zip(("eager", "cma", "cma_ns", "copy_ns", "coop"), map(int, m.groups())))


def test_slow_cma_moves_thresholds():
    fast = run({})
    if fast["cma_ns"] == 0:
        print("CMA not permitted here (ptrace scope?): only the no-CMA choice is checked")
        assert fast["cma"] == 0
        return
    slow = run({"WEFT_SMP_CMA_EXTRA_COST": "400000"})  # +400 us per CMA read
    assert slow["cma_ns"] >= fast["cma_ns"] + 400000 - 1000 or slow["cma_ns"] >= 400000
    # CMA costs more: two copies stay cheaper up to a larger size. Where the
    # two copies already beat CMA's rate (the family 26 AMD VM), the fast
    # choice can sit at the cache bound, 8 x L2 (8 MiB), and the model can
    # keep the slow one there too (seen under ASan on that VM: both 8 MiB).
    # Near that boundary the two runs' rates can fall on either side of it:
    # then the slow choice is the point where CMA's 0.4 ms pays off, MiBs
    # but under the cache bound (seen under ASan on the family 25 VM: fast
    # 8 MiB, slow 4 MiB).
    at_cache_bound = fast["cma"] >= 8 << 20
    assert slow["cma"] >= max(fast["cma"], fast["eager"]) or \
        (at_cache_bound and slow["cma"] >= 1 << 20), (fast, slow)
    assert slow["cma"] > max(fast["cma"], fast["eager"]) or at_cache_bound, (fast, slow)
    assert slow["eager"] >= fast["eager"], (fast, slow)
    # cooperative copy modelled from 2 x CMA's fixed cost x its rate, at most 256
    # KiB, then raised to half the L2 (docs/tuning.md item 5): a 400 us call
    # never lowers it
    assert fast["coop"] >= 4096 and slow["coop"] >= max(fast["coop"], 262144), (fast, slow)


def test_fixed_and_explicit_knobs_win():
    fixed = run({"WEFT_SMP_TUNING": "fixed"})
    assert (fixed["eager"], fixed["cma"], fixed["coop"]) == (8192, 0, 262144)
    mine = run({"WEFT_SMP_EAGERSIZE": "3000", "WEFT_SMP_CMA_THRESHOLD": "50000",
                "WEFT_SMP_COOP_THRESHOLD": "70000"})
    assert (mine["eager"], mine["cma"], mine["coop"]) == (3000, 50000, 70000)


def test_no_cooperative_copy_when_oversubscribed():
    """More ranks on the node than CPUs: no cooperative copy (its sender
    half only takes a CPU from a rank that would run), unless asked for."""
    ncpu = os.cpu_count() or 1
    if ncpu + 1 > 8:
        print(f"{ncpu} CPUs: an oversubscribed job would need {ncpu + 1} ranks; not run")
        return
    over = run({}, nprocs=ncpu + 1)
    if over["cma_ns"] == 0:
        print("CMA not permitted here: no cooperative copy to check")
        return
    assert over["coop"] == 2**64 - 1, over
    asked = run({"WEFT_SMP_COOP_THRESHOLD": "64k"}, nprocs=ncpu + 1)
    assert asked["coop"] == 65536, asked
    if ncpu >= 2:
        assert run({}, nprocs=2)["coop"] < 2**64 - 1  # on where every rank has a CPU


def test_tuning_file_overrides(tmp_path):
    rules = tmp_path / "p2p.rules"
    rules.write_text("# first matching pt2pt rule wins\n"
                     "pt2pt intra vendor=NoSuchVendor : eager_limit=1k cma_threshold=2k\n"
                     "pt2pt intra cma_ns>=100000000 : eager_limit=2k\n"
                     "pt2pt intra : eager_limit=12k cma_threshold=96k coop_threshold=20k\n")
    got = run({"WEFT_TUNING_FILE": str(rules)}, nprocs=3)
    assert (got["eager"], got["cma"], got["coop"]) == (12 * 1024, 96 * 1024, 20 * 1024)
    # a condition on the measured cost selects another rule
    got = run({"WEFT_TUNING_FILE": str(rules), "WEFT_SMP_CMA_EXTRA_COST": "100000000"})
    if got["cma_ns"] > 0:
        assert got["eager"] == 2048


def test_bad_tuning_file_fails_init(tmp_path):
    rules = tmp_path / "bad.rules"
    rules.write_text("pt2pt intra : eager_limit=1k\npt2pt intra l3=5 : eager_limit=1k\n")
    err = run({"WEFT_TUNING_FILE": str(rules)}, expect_ok=False)
    assert "MPI_Init" in err and "bad.rules:2" in err and "l3=5" in err, err
    err = run({"WEFT_TUNING_FILE": str(tmp_path / "missing.rules")}, expect_ok=False)
    assert "missing.rules" in err and "cannot read" in err, err


def test_weft_info_tuning_reports_choice(tmp_path):
    info = str(PREFIX / "bin" / "weft-info")

    def show(env):
        p = subprocess.run([info, "--tuning"], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, **env))
        assert p.returncode == 0, p.stderr
        for key in ("CPU", "costs", "table", "eager limit", "CMA from", "coop from", "why"):
            assert re.search(r"^\s+%s\s" % key, p.stdout, re.M), p.stdout
        eager = int(re.search(r"eager limit\s+(\d+)", p.stdout).group(1))
        cma = int(re.search(r"CMA from\s+(\d+)", p.stdout).group(1))
        return eager, cma, p.stdout

    eager, cma, out = show({})
    if "CMA unavailable" not in out:
        s_eager, s_cma, _ = show({"WEFT_SMP_CMA_EXTRA_COST": "400000"})
        # 0.4 ms more per CMA call pays off only for large messages: where
        # the pipeline's streamed copies are measured, 0.6 ms of rendezvous
        # is worth 1.5 F S bytes, so at least 256 KiB down to a pipeline at
        # 0.45 GB/s (a loaded CI machine in a slow phase measured it at ~1
        # GB/s: 512 KiB); the unslowed choice is measured too, and on a
        # loaded machine it can itself land at the top of the range (seen:
        # 8 MiB, then 4 MiB)
        assert s_cma >= 1 << 18 and s_cma > eager and s_eager >= eager, (s_cma, cma, eager)
        assert s_cma > cma or cma >= 1 << 20, (s_cma, cma)
    rules = tmp_path / "r.rules"
    rules.write_text("pt2pt intra : eager_limit=12k cma_threshold=96k\n")
    eager, cma, out = show({"WEFT_TUNING_FILE": str(rules)})
    assert (eager, cma) == (12288, 98304) and "r.rules line 1" in out, out
