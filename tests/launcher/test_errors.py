# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Everything wrong before launch: one clear line on stderr, non-zero exit."""
import os

import pytest

USAGE = 2


def one_error_line(p):
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("mpiexec: error: "), lines[0]
    assert p.stdout == ""
    return lines[0]


@pytest.mark.parametrize("args,code,text", [
    (["-n", "0", "true"], USAGE, "positive integer"),
    (["-n", "-2", "true"], USAGE, "positive integer"),
    (["-n", "many", "true"], USAGE, "positive integer"),
    (["-np"], USAGE, "needs a value"),
    (["-ppn", "0", "true"], USAGE, "positive integer"),
    (["-frobnicate", "true"], USAGE, "unknown option '-frobnicate'"),
    (["-n", "2"], USAGE, "no program"),
    (["-bind-to", "board", "true"], USAGE, "unknown level"),
    (["-timeout", "soon", "true"], USAGE, "positive integer"),
    (["-genv", "ONLYNAME"], USAGE, "needs NAME and VALUE"),
    (["-n", "1", "/no/such/program"], 127, "not found"),
    (["-n", "1", "no_such_program_weft"], 127, "not found in PATH"),
    (["-n", "1", "@NOEXEC@"], 126, "not executable"),
    (["-n", "1", "/"], 126, "is a directory"),
    (["-hosts", "localhost:x", "true"], USAGE, "bad slot count"),
    (["-f", "/no/such/hostfile", "true"], USAGE, "cannot open hostfile"),
])
def test_bad_invocation(launcher, tmp_path, args, code, text):
    noexec = tmp_path / "data.txt"
    noexec.write_text("not a program\n")
    noexec.chmod(0o644)
    args = [str(noexec) if a == "@NOEXEC@" else a for a in args]
    p = launcher.run(args, timeout=30)
    line = one_error_line(p)
    assert p.returncode == code, (p.returncode, line)
    assert text in line


def test_remote_launcher_fails(launcher):
    # Host names need not resolve here: they go to the launcher command as
    # given; its failure is reported naming the host, and nothing hangs.
    p = launcher.run(["-hosts", "no-such-host.invalid", "true"], timeout=30,
                     env={"WEFT_LAUNCHER_CMD": "false"})
    line = one_error_line(p)
    assert p.returncode == 1
    assert "host no-such-host.invalid: launcher command 'false' failed (exit code 1)" in line


def test_remote_bad_iface(launcher):
    p = launcher.run(["-iface", "no-such-if0", "-hosts", "other-host.invalid", "true"],
                     timeout=30)
    line = one_error_line(p)
    assert p.returncode == 1 and "network interface 'no-such-if0' does not exist" in line
    p = launcher.run(["-iface", "lo", "-hosts", "other-host.invalid", "true"], timeout=30)
    assert "has no non-loopback IPv4 address" in one_error_line(p)


def test_bad_hostfile_line(launcher, tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("# comment\nlocalhost:2\nlocal host:3\n")
    p = launcher.run(["-f", str(hf), "true"], timeout=30)
    line = one_error_line(p)
    assert p.returncode == USAGE and "line 3" in line


def test_hostfile_unknown_host(launcher, tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("localhost\nno-such-host.invalid:4\n")
    p = launcher.run(["-hostfile", str(hf), "true"], timeout=30,
                     env={"WEFT_LAUNCHER_CMD": "false %h"})
    line = one_error_line(p)
    assert p.returncode == 1 and "host no-such-host.invalid: launcher command" in line


def test_empty_hostfile(launcher, tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("\n# nothing\n")
    p = launcher.run(["-f", str(hf), "true"], timeout=30)
    assert "names no hosts" in one_error_line(p)


@pytest.mark.parametrize("var,value,text", [
    ("WEFT_SMP_EAGERSIZE", "banana", "WEFT_SMP_EAGERSIZE"),
    ("MV2_SMP_EAGERSIZE", "banana", "MV2_SMP_EAGERSIZE"),
    ("WEFT_CPU_BINDING_POLICY", "sideways", "bunch|scatter|none"),
    ("WEFT_ENABLE_AFFINITY", "maybe", "WEFT_ENABLE_AFFINITY"),
    ("WEFT_CPU_MAPPING", "0:x", "invalid CPU mapping"),
    ("WEFT_CPU_MAPPING", "0-:1", "invalid CPU mapping"),
])
def test_bad_tunable(launcher, var, value, text):
    p = launcher.run(["-n", "1", "true"], env={var: value}, timeout=30)
    line = one_error_line(p)
    assert p.returncode == USAGE
    assert text in line and value in line


def test_mapping_names_missing_cpu(launcher):
    p = launcher.run(["-n", "1", "true"], env={"WEFT_CPU_MAPPING": "4000"}, timeout=30)
    line = one_error_line(p)
    assert p.returncode != 0 and "names no CPU available" in line


def test_error_before_launch_starts_nothing(launcher, tmp_path):
    flag = tmp_path / "ran"
    p = launcher.run(["-n", "2", "-bind-to", "nowhere", "touch", str(flag)], timeout=30)
    assert p.returncode == USAGE
    assert not flag.exists()
