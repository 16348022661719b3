# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""mpiexec basics: exit codes, crashes, I/O forwarding, signals, timeout, env."""
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import assert_no_leftovers, read_stdout_lines

NP = [1, 2, 3, 4, 8]


def test_version_and_help(launcher):
    p = launcher.run(["--version"])
    assert p.returncode == 0 and "Weft" in p.stdout
    p = launcher.run(["-h"])
    assert p.returncode == 0 and "-prepend-rank" in p.stdout and "-bind-to" in p.stdout


def test_mpirun_is_mpiexec(launcher):
    assert os.path.exists(launcher.mpirun), "bin/mpirun symlink missing"
    p = launcher.run(["-n", "2", "true"], exe=launcher.mpirun)
    assert p.returncode == 0, p.stderr


@pytest.mark.parametrize("np", NP)
def test_all_exit_zero(launcher, marker, np):
    p = launcher.run(["-n", str(np), launcher.helper, "print", "2"], marker=marker)
    assert p.returncode == 0, p.stderr
    assert p.stderr.count("err rank") == 2 * np
    for r in range(np):
        assert f"out rank {r} line 1\n" in p.stdout


@pytest.mark.parametrize("np", [2, 3, 8])
def test_nonzero_exit_propagates(launcher, marker, np):
    p = launcher.run(["-n", str(np), launcher.helper, "exit", "1", "5"], marker=marker, timeout=30)
    assert p.returncode == 5, p.stderr
    assert re.search(r"mpiexec: error: rank 1 \(pid \d+\) on host \S+ exited with code 5", p.stderr)
    assert p.elapsed < 10


def test_crash_ends_job_quickly(launcher, marker):
    p = launcher.run(["-n", "3", launcher.helper, "crash", "1"], marker=marker, timeout=30)
    assert p.returncode == 128 + signal.SIGSEGV, (p.returncode, p.stderr)
    lines = [l for l in p.stderr.splitlines() if l.startswith("mpiexec:")]
    assert len(lines) == 1, p.stderr
    assert re.search(r"rank 1 \(pid \d+\) on host \S+ killed by signal 11 \(Segmentation fault\)",
                     lines[0])
    # The crash happens 0.3 s in; the whole job must be gone within ~2 s.
    assert p.elapsed < 2.5, p.elapsed
    assert_no_leftovers(marker, wait=1.0)
    jobid = re.search(r"jobid=(\w+)", p.stdout).group(1)
    assert jobid
    left = [f for f in os.listdir("/dev/shm") if f.startswith(f"weft-{jobid}-")]
    assert not left, f"/dev/shm leftovers: {left}"


def test_stdin_goes_to_rank0_only(launcher, marker):
    data = "first line\n" + "x" * 300000 + "\nlast\n"
    p = launcher.run(["-n", "3", launcher.helper, "stdin"], input=data, marker=marker)
    assert p.returncode == 0, p.stderr
    assert f"rank 0 read {len(data)} bytes: first line" in p.stdout
    assert "rank 1 read 0 bytes" in p.stdout
    assert "rank 2 read 0 bytes" in p.stdout


def test_stdin_devnull(launcher, marker):
    p = launcher.run(["-n", "2", launcher.helper, "stdin"], marker=marker)
    assert p.returncode == 0
    assert "rank 0 read 0 bytes" in p.stdout


@pytest.mark.parametrize("flag", ["-l", "-prepend-rank"])
def test_prepend_rank(launcher, marker, flag):
    p = launcher.run([flag, "-n", "4", launcher.helper, "print", "50"], marker=marker)
    assert p.returncode == 0, p.stderr
    out = p.stdout.splitlines()
    err = p.stderr.splitlines()
    assert len(out) == 200 and len(err) == 200
    for line in out:
        m = re.fullmatch(r"\[(\d)\] out rank (\d) line \d+", line)
        assert m and m.group(1) == m.group(2), line
    for line in err:
        m = re.fullmatch(r"\[(\d)\] err rank (\d) line \d+", line)
        assert m and m.group(1) == m.group(2), line


def test_lines_not_interleaved(launcher, marker):
    p = launcher.run(["-n", "8", launcher.helper, "print", "200"], marker=marker)
    assert p.returncode == 0
    for line in p.stdout.splitlines():
        assert re.fullmatch(r"out rank \d line \d+", line), line
    assert len(p.stdout.splitlines()) == 1600


def test_partial_line_is_flushed(launcher, marker):
    p = launcher.run(["-n", "1", "printf", "no newline"], marker=marker)
    assert p.returncode == 0 and p.stdout == "no newline"


def _wait_for_lines(proc, count, timeout=10):
    return read_stdout_lines(proc, count, timeout).count("\n")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_signal_forwarded(launcher, marker, sig):
    proc = launcher.popen(["-n", "3", launcher.helper, "sleep", "60"], marker=marker)
    try:
        assert _wait_for_lines(proc, 3) == 3
        t0 = time.monotonic()
        proc.send_signal(sig)
        rc = proc.wait(timeout=10)
        assert time.monotonic() - t0 < 3
        assert rc == 128 + sig
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
    assert_no_leftovers(marker)


def test_signal_escalates_to_kill(launcher, marker):
    proc = launcher.popen(["-n", "2", launcher.helper, "ignore-term"], marker=marker)
    try:
        assert _wait_for_lines(proc, 2) == 2
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=15)
        assert rc == 128 + signal.SIGTERM
        assert time.monotonic() - t0 < 6
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
    assert_no_leftovers(marker)


def test_kill9_mpiexec_leaves_no_orphans(launcher, marker):
    proc = launcher.popen(["-n", "3", launcher.helper, "sleep", "60"], marker=marker)
    try:
        assert _wait_for_lines(proc, 3) == 3
        proc.kill()
        proc.wait(timeout=10)
    finally:
        proc.communicate(timeout=10)
    assert_no_leftovers(marker, wait=3.0)


def test_timeout(launcher, marker):
    p = launcher.run(["-timeout", "1", "-n", "2", launcher.helper, "sleep", "60"], marker=marker,
                     timeout=30)
    assert p.returncode == 124, p.stderr
    assert "timed out after 1 seconds" in p.stderr
    assert p.elapsed < 5


def test_mpiexec_timeout_env(launcher, marker):
    p = launcher.run(["-n", "1", launcher.helper, "sleep", "60"], marker=marker, timeout=30,
                     env={"MPIEXEC_TIMEOUT": "1"})
    assert p.returncode == 124


def test_env_passing(launcher, marker):
    script = 'echo "A=$WA B=$WB C=$WC HOME=${HOME:-unset} R=$PMI_RANK S=$PMI_SIZE J=$WEFT_JOBID"'
    p = launcher.run(["-genv", "WA", "1", "-env", "WB", "two words", "WC=3", "-n", "2", "sh", "-c",
                      script], marker=marker)
    assert p.returncode == 0, p.stderr
    lines = sorted(p.stdout.splitlines())
    assert len(lines) == 2
    for r, line in enumerate(lines):
        m = re.fullmatch(r"A=1 B=two words C=3 HOME=(\S+) R=(\d) S=2 J=([0-9a-z]+)", line)
        assert m, line
        assert m.group(1) != "unset"
    jobs = {re.search(r"J=(\w+)", l).group(1) for l in lines}
    assert len(jobs) == 1


def test_genvnone(launcher, marker):
    p = launcher.run(["-genvnone", "-genv", "KEEP", "yes", "-n", "1", "/bin/sh", "-c",
                      'echo "HOME=${HOME:-unset} KEEP=$KEEP"'], marker=marker,
                     env={"HOME": "/somewhere"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "HOME=unset KEEP=yes"


def test_program_arguments_passed(launcher):
    p = launcher.run(["-n", "1", "echo", "-n", "--flag", "a b"])
    assert p.returncode == 0 and p.stdout == "--flag a b"


def test_jobid_unique(launcher):
    ids = set()
    for _ in range(3):
        p = launcher.run(["-n", "1", "sh", "-c", "echo $WEFT_JOBID"])
        ids.add(p.stdout.strip())
    assert len(ids) == 3


def test_default_np_fills_host_slots(launcher, marker):
    p = launcher.run(["-hosts", "localhost:3", "sh", "-c", 'echo "$PMI_RANK/$PMI_SIZE"'],
                     marker=marker)
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.split()) == ["0/3", "1/3", "2/3"]


def test_large_output(launcher, marker):
    # 2 x 20 MB through proxy and mpiexec, with no line breaks at all.
    p = subprocess.run([launcher.mpiexec, "-genv", "WEFT_TEST_MARKER", marker, "-n", "2", "sh",
                        "-c", 'head -c 20000000 /dev/zero | tr "\\0" a; echo'],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120,
                       env=launcher.env())
    assert p.returncode == 0, p.stderr
    assert len(p.stdout) == 2 * 20000001
