# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Collective rules that tell blocking calls from non-blocking ones: the
`blocking` / `!blocking` conditions of WEFT_COLL_TUNING_FILE, and the
shipped scatter rules (the node region for a blocking 1 MiB scatter at
np 5, point-to-point linear for the same iscatter), read back from the job
report's per-algorithm call counts."""
import json
import os
import subprocess

import pytest

from conftest import PREFIX, launcher


def scatter_algorithms(np, bench, size, env, tmp_path):
    prog = PREFIX / "libexec" / "weft-bench" / bench
    if not prog.exists():
        pytest.fail(f"{prog} is not installed")
    report = tmp_path / f"{bench}.json"
    full = dict(os.environ, WEFT_REPORT="1", WEFT_REPORT_FILE=str(report), **env)
    p = subprocess.run(launcher() + ["-n", str(np), str(prog), "-m", f"{size}:{size}", "-i", "3",
                                   "-x", "1", "-c"],
                       capture_output=True, text=True, timeout=120, env=full)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    calls = json.loads(report.read_text())["algorithm_calls"]
    return {k: v for k, v in calls.items() if k.startswith("scatter:")}


def test_blocking_condition_in_a_rules_file(tmp_path):
    rules = tmp_path / "coll.rules"
    rules.write_text("scatter intra blocking : linear\nscatter intra !blocking : binomial\n")
    env = {"WEFT_COLL_TUNING_FILE": str(rules)}
    blocking = scatter_algorithms(3, "scatter", 64, env, tmp_path)
    nonblocking = scatter_algorithms(3, "iscatter", 64, env, tmp_path)
    assert list(blocking) == ["scatter:intra:linear"], blocking
    assert list(nonblocking) == ["scatter:intra:binomial"], nonblocking
    assert all(n > 0 for n in blocking["scatter:intra:linear"]), blocking


def test_shipped_scatter_rules_split_blocking_and_nonblocking(tmp_path):
    size = 1 << 20
    blocking = scatter_algorithms(5, "scatter", size, {}, tmp_path)
    nonblocking = scatter_algorithms(5, "iscatter", size, {}, tmp_path)
    assert list(blocking) == ["scatter:intra:shm"], blocking
    assert list(nonblocking) == ["scatter:intra:linear"], nonblocking
