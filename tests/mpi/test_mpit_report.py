# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""The job report (WEFT_REPORT, WEFT_REPORT_FILE) of a ring of known sizes
(tests/mpi/mpit_report.c) matches the traffic exactly, at 1, 2, 3, 4 and 8
ranks; WEFT_REPORT=2 adds the matrix; without either nothing is printed."""
import json
import os
import subprocess

import pytest

from conftest import BUILD, launcher


def run(np, env, args=()):
    prog = BUILD / "tests" / "mpi" / "mpit_report"
    if not prog.exists():
        pytest.fail(f"{prog} is not built")
    full = dict(os.environ, **env)
    p = subprocess.run(launcher() + ["-n", str(np), str(prog), *args], capture_output=True, text=True,
                       timeout=120, env=full)
    assert p.returncode == 0 and "No Errors" in p.stdout, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


@pytest.mark.parametrize("np", [1, 2, 3, 4, 8])
def test_ring_report_exact(np, tmp_path):
    path = tmp_path / "report.json"
    # the eager limit is chosen at init from measured costs (docs/tuning.md): pin it
    p = run(np, {"WEFT_REPORT": "1", "WEFT_REPORT_FILE": str(path), "WEFT_SMP_EAGERSIZE": "8192"})
    rep = json.loads(path.read_text())
    assert rep["schema"] == "weft-job-report/1" and rep["nranks"] == np
    for r, row in enumerate(rep["ranks"]):
        right = (r + 1) % np
        want_bytes = 3 * 100 * (r + 1) + 50000
        assert row["rank"] == r
        assert row["msgs_sent"] == 4 and row["bytes_sent"] == want_bytes, row
        assert row["msgs_received"] == 4, row
        # Sending to oneself is always a copy (eager); otherwise 50000 B > the 8 KiB eager limit.
        assert (row["eager_msgs_sent"], row["rndv_msgs_sent"]) == ((4, 0) if np == 1 else (3, 1)), row
        assert rep["traffic"]["msgs"][r] == [4 if d == right else 0 for d in range(np)]
        assert rep["traffic"]["bytes"][r] == [want_bytes if d == right else 0 for d in range(np)]
    assert rep["collective_calls"] == {} and rep["algorithm_calls"] == {}
    top = rep["top_pairs"]
    assert len(top) == min(np, 10)
    assert top[0] == {"src": np - 1, "dst": 0, "msgs": 4, "bytes": 300 * np + 50000}
    assert [t["bytes"] for t in top] == sorted((t["bytes"] for t in top), reverse=True)
    lines = [l for l in p.stderr.splitlines() if l.startswith("weft report:")]
    assert len([l for l in lines if l.split()[2].isdigit()]) == np, p.stderr  # one row per rank
    assert "row = source rank" not in p.stderr


def test_report_file_written_through_mpi_t(tmp_path):
    """WEFT_REPORT_FILE set by the program through MPI_T (an ANYTIME cvar) takes effect."""
    path = tmp_path / "viampit.json"
    p = run(2, {}, [str(path)])
    rep = json.loads(path.read_text())
    assert rep["nranks"] == 2 and rep["ranks"][1]["bytes_sent"] == 3 * 200 + 50000
    assert "weft report" not in p.stderr  # WEFT_REPORT stays 0: no text


def test_report_level2_matrix_and_off(tmp_path):
    p = run(3, {"WEFT_REPORT": "2"})
    assert "row = source rank, column = destination rank" in p.stderr
    assert "weft report:     0 0 50300 0" in p.stderr, p.stderr
    p = run(3, {})
    assert "weft report" not in p.stderr, p.stderr


def run_prog(name, np, env, args=()):
    prog = BUILD / "tests" / "mpi" / name
    if not prog.exists():
        pytest.fail(f"{prog} is not built")
    p = subprocess.run(launcher() + ["-n", str(np), str(prog), *args], capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, **env))
    assert p.returncode == 0 and "No Errors" in p.stdout, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


OUTSIDE_S, INSIDE_S = 0.5, 0.4  # as in tests/mpi/mpit_mpitime.c
SLACK = 0.02                      # clock reads around the sleeps


@pytest.mark.parametrize("np", [1, 2, 3, 4, 8])
def test_time_in_mpi(np, tmp_path):
    """Time inside MPI calls: sleeps outside MPI are never counted (hard bound:
    mpi <= wall - sleep), blocking inside MPI is (lower bound with room for
    the ranks' start and barrier-release skew on a loaded, oversubscribed
    machine), and it
    is split by call class."""
    path = tmp_path / "t.json"
    p = run_prog("mpit_mpitime", np, {"WEFT_REPORT": "1", "WEFT_REPORT_FILE": str(path)})
    rep = json.loads(path.read_text())
    for r, row in enumerate(rep["ranks"]):
        mpi, wall, cls = row["mpi_seconds"], row["wall_seconds"], row["mpi_seconds_by_class"]
        assert set(cls) == {"pt2pt", "coll", "rma", "io", "other"}, row
        assert abs(sum(cls.values()) - mpi) < 1e-6, row
        assert cls["rma"] == 0 and cls["io"] == 0, row
        outside = OUTSIDE_S if r == 0 else INSIDE_S
        assert mpi <= wall - outside + SLACK, row     # a sleep outside MPI is never in it
        if np == 1:
            assert mpi < 0.1, row
        elif r == 0:
            assert cls["pt2pt"] >= INSIDE_S - 0.25, row  # waited in MPI_Recv for the senders
        else:
            assert cls["coll"] >= OUTSIDE_S - 0.3, row  # waited in MPI_Barrier for rank 0
    rows = [l.split() for l in p.stderr.splitlines() if l.startswith("weft report:")]
    head = next(r for r in rows if "mpi_s" in r)
    col = head.index("mpi_s")
    for r in (r for r in rows if r[2].isdigit()):
        assert abs(float(r[col]) - rep["ranks"][int(r[2])]["mpi_seconds"]) < 1e-5, r


@pytest.mark.parametrize("np", [2, 3])
def test_report_level_mismatch_no_hang(np):
    """Only rank 0 switches WEFT_REPORT on (through MPI_T, after MPI_Init):
    MPI_Finalize used to wait forever for the other ranks' records. Now the
    ranks agree, rank 0 warns and prints; time in MPI is not measured ("-")
    because the report was off at MPI_Init."""
    p = run_prog("mpit_mpitime", np, {}, ["mismatch"])
    assert "differs between ranks" in p.stderr, p.stderr
    rows = [l.split() for l in p.stderr.splitlines() if l.startswith("weft report:") and l.split()[2].isdigit()]
    assert len(rows) == np, p.stderr
    head = next(l.split() for l in p.stderr.splitlines() if "mpi_s" in l)
    assert all(r[head.index("mpi_s")] == "-" for r in rows), p.stderr
