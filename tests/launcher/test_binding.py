# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""CPU binding at launch: policies, explicit maps, MV2_* aliases, SHOW output."""
import os
import re

import pytest

NCPU = len(os.sched_getaffinity(0))


def cores():
    """Physical cores we may use (hyperthreads folded)."""
    seen = set()
    for cpu in os.sched_getaffinity(0):
        base = f"/sys/devices/system/cpu/cpu{cpu}/topology"
        try:
            with open(f"{base}/core_id") as f:
                core = f.read().strip()
            with open(f"{base}/physical_package_id") as f:
                pkg = f.read().strip()
        except OSError:
            core, pkg = str(cpu), "0"
        seen.add((pkg, core))
    return len(seen)


def shown(stdout):
    """{rank: cpu list text} from RANK:n CPU_SET: lines."""
    out = {}
    for line in stdout.splitlines():
        m = re.fullmatch(r"RANK:(\d+) CPU_SET: (\S+)", line)
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


def cpus(text):
    s = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        s.update(range(int(lo), int(hi or lo) + 1))
    return s


def allowed_lists(stdout):
    """{rank: Cpus_allowed_list} printed by the ranks themselves."""
    out = {}
    for line in stdout.splitlines():
        m = re.fullmatch(r"R(\d+) (\S+)", line)
        if m:
            out[int(m.group(1))] = cpus(m.group(2))
    return out


SELF_REPORT = ["sh", "-c", 'echo "R$PMI_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"']


@pytest.mark.skipif(cores() < 2, reason="needs 2 cores")
def test_np2_bound_to_distinct_cores(launcher, marker):
    p = launcher.run(["-n", "2"] + SELF_REPORT, env={"WEFT_SHOW_CPU_BINDING": "1"}, marker=marker)
    assert p.returncode == 0, p.stderr
    show = shown(p.stdout)
    assert sorted(show) == [0, 1]
    a, b = cpus(show[0]), cpus(show[1])
    assert a and b and not (a & b)
    # The SHOW lines come before any rank output, in rank order.
    lines = p.stdout.splitlines()
    assert lines[0].startswith("RANK:0 ") and lines[1].startswith("RANK:1 ")
    got = allowed_lists(p.stdout)
    assert got[0] == a and got[1] == b


def test_oversubscribed_not_bound(launcher, marker):
    np = cores() * 2
    p = launcher.run(["-n", str(np)] + SELF_REPORT, env={"WEFT_SHOW_CPU_BINDING": "1"},
                     marker=marker)
    assert p.returncode == 0, p.stderr
    assert "oversubscribed" in p.stdout
    show = shown(p.stdout)
    assert sorted(show) == list(range(np))
    every = set(os.sched_getaffinity(0))
    for r, got in allowed_lists(p.stdout).items():
        assert got == every, (r, got)


@pytest.mark.skipif(cores() < 2, reason="needs 2 cores")
def test_mv2_aliases(launcher, marker):
    p = launcher.run(["-n", "2", "true"], marker=marker,
                     env={"MV2_SHOW_CPU_BINDING": "1", "MV2_CPU_BINDING_POLICY": "scatter",
                          "MV2_CPU_BINDING_LEVEL": "core"})
    assert p.returncode == 0, p.stderr
    show = shown(p.stdout)
    assert sorted(show) == [0, 1] and not (cpus(show[0]) & cpus(show[1]))


def test_mv2_enable_affinity_off(launcher, marker):
    p = launcher.run(["-n", "2"] + SELF_REPORT, marker=marker,
                     env={"MV2_ENABLE_AFFINITY": "0", "WEFT_SHOW_CPU_BINDING": "1"})
    assert p.returncode == 0
    assert "CPU binding disabled" in p.stdout
    every = set(os.sched_getaffinity(0))
    assert all(v == every for v in allowed_lists(p.stdout).values())


@pytest.mark.skipif(NCPU < 2 or not {0, 1} <= os.sched_getaffinity(0), reason="needs CPUs 0 and 1")
@pytest.mark.parametrize("var", ["WEFT_CPU_MAPPING", "MV2_CPU_MAPPING"])
def test_explicit_mapping(launcher, marker, var):
    p = launcher.run(["-n", "2"] + SELF_REPORT, marker=marker,
                     env={var: "1:0", "WEFT_SHOW_CPU_BINDING": "1"})
    assert p.returncode == 0, p.stderr
    assert shown(p.stdout) == {0: "1", 1: "0"}
    assert allowed_lists(p.stdout) == {0: {1}, 1: {0}}


@pytest.mark.skipif(NCPU < 2 or not {0, 1} <= os.sched_getaffinity(0), reason="needs CPUs 0 and 1")
def test_mapping_with_ranges_and_wraparound(launcher, marker):
    p = launcher.run(["-n", "3"] + SELF_REPORT, marker=marker,
                     env={"WEFT_CPU_MAPPING": "0-1:1", "WEFT_SHOW_CPU_BINDING": "1"})
    assert p.returncode == 0, p.stderr
    assert allowed_lists(p.stdout) == {0: {0, 1}, 1: {1}, 2: {0, 1}}


def test_bind_to_none(launcher, marker):
    p = launcher.run(["-bind-to", "none", "-n", "2"] + SELF_REPORT, marker=marker,
                     env={"WEFT_SHOW_CPU_BINDING": "1"})
    assert p.returncode == 0
    assert "CPU binding disabled (policy none)" in p.stdout
    every = set(os.sched_getaffinity(0))
    assert all(v == every for v in allowed_lists(p.stdout).values())


@pytest.mark.parametrize("level", ["socket", "numa"])
def test_bind_to_socket_numa(launcher, marker, level):
    p = launcher.run(["-bind-to", level, "-n", "1"] + SELF_REPORT, marker=marker,
                     env={"WEFT_SHOW_CPU_BINDING": "1"})
    assert p.returncode == 0, p.stderr
    show = shown(p.stdout)
    assert allowed_lists(p.stdout)[0] == cpus(show[0])


def test_show_off_by_default(launcher, marker):
    p = launcher.run(["-n", "2", "true"], marker=marker)
    assert p.returncode == 0 and "CPU_SET" not in p.stdout


@pytest.mark.skipif(NCPU < 2, reason="needs 2 CPUs")
def test_mpirun_affinity_kept_when_oversubscribed(launcher, marker):
    """mpirun started on one CPU (taskset) with 2 ranks: more ranks than CPUs it
    may use, so nothing is bound (decided without loading the topology) and
    the ranks stay on that CPU instead of being spread over the machine."""
    one = min(os.sched_getaffinity(0))
    p = launcher.run(["-n", "2"] + SELF_REPORT, env={"WEFT_SHOW_CPU_BINDING": "1"},
                     marker=marker, wrap=["taskset", "-c", str(one)])
    assert p.returncode == 0, p.stderr
    assert "2 local ranks on 1 CPUs (oversubscribed)" in p.stdout, p.stdout
    assert shown(p.stdout) == {0: str(one), 1: str(one)}
    assert allowed_lists(p.stdout) == {0: {one}, 1: {one}}
