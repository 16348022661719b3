# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Paths and helpers for tests/launcher.

Environment:
  WEFT_PREFIX              install prefix to test (default <repo>/install)
  WEFT_BUILD               build directory holding tests/launcher/pmi_probe
                           (default <repo>/build; WEFT_BUILD_DIR is accepted too)
  WEFT_PEER_MPICH_PREFIX   venv with the mpich wheel, for the hydra interop test
                           (default <repo>/.venv-peers, then /work/venv-peers)
Every launch has a timeout; every test that starts ranks checks that none is
left behind, by a unique marker variable passed with -genv, and the /dev/shm
checks look only at the entries of the jobs the test started (other jobs may
run on the machine at the same time).
"""
import os
import re
import select
import signal
import subprocess
import time
import uuid

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = os.path.abspath(os.environ.get("WEFT_PREFIX", os.path.join(REPO, "install")))
BUILD = os.path.abspath(
    os.environ.get("WEFT_BUILD", os.environ.get("WEFT_BUILD_DIR", os.path.join(REPO, "build"))))


def _peer_prefix():
    env = os.environ.get("WEFT_PEER_MPICH_PREFIX")
    if env:
        return env
    for cand in (os.path.join(REPO, ".venv-peers"), "/work/venv-peers"):
        if os.path.exists(os.path.join(cand, "bin", "mpiexec.hydra")):
            return cand
    return os.path.join(REPO, ".venv-peers")


PEER_PREFIX = _peer_prefix()


def need(path, what):
    if not os.path.exists(path):
        pytest.fail(f"{path} does not exist ({what})")
    return path


def marked_pids(marker):
    """PIDs of live processes whose environment carries WEFT_TEST_MARKER=marker."""
    needle = f"WEFT_TEST_MARKER={marker}".encode()
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{d}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env.split(b"\0") and state != b"Z":
            pids.append(int(d))
    return pids


def assert_no_leftovers(marker, wait=2.0):
    deadline = time.monotonic() + wait
    while True:
        left = marked_pids(marker)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in left:  # do not leave them for the next test either
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    assert not left, f"processes left behind: {left}"


# marker -> pids of the mpiexec processes started with it (job_shm_entries).
LAUNCHES = {}


def job_shm_entries(marker):
    """/dev/shm entries of the jobs started with marker: mpiexec's job id is
    its pid in hex followed by 8 random hex digits (src/launcher/mpiexec.c)."""
    pats = [re.compile(rf"weft-{pid:x}[0-9a-f]{{8}}-") for pid in LAUNCHES.get(marker, [])]
    return {e for e in os.listdir("/dev/shm") if any(p.match(e) for p in pats)}


def assert_no_job_shm(marker, wait=2.0):
    deadline = time.monotonic() + wait
    while job_shm_entries(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = job_shm_entries(marker)
    assert not left, f"/dev/shm left behind: {left}"


class Launcher:
    def __init__(self):
        self.mpiexec = need(os.path.join(PREFIX, "bin", "mpiexec"), "run `make` first")
        self.mpirun = os.path.join(PREFIX, "bin", "mpirun")
        self.probe = need(os.path.join(BUILD, "tests", "launcher", "pmi_probe"),
                          "build tests/launcher (ninja -C build pmi_probe)")
        self.helper = need(os.path.join(BUILD, "tests", "launcher", "launcher_helper"),
                           "build tests/launcher (ninja -C build launcher_helper)")
        self.hydra = os.path.join(PEER_PREFIX, "bin", "mpiexec.hydra")

    @staticmethod
    def env(extra=None):
        env = dict(os.environ)
        for k in list(env):
            # A clean slate: no PMI or binding settings from the caller.
            if k.startswith(("PMI_", "WEFT_", "MV2_", "SLURM_")) and k not in ("WEFT_PREFIX",):
                del env[k]
        if extra:
            env.update(extra)
        return env

    def run(self, args, timeout=60, env=None, input=None, marker=None, exe=None, wrap=()):
        cmd = list(wrap) + [exe or self.mpiexec]
        if marker:
            cmd += ["-genv", "WEFT_TEST_MARKER", marker]
        cmd += list(args)
        t0 = time.monotonic()
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=self.env(env),
                              stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL
                              ) as proc:
            if marker:
                LAUNCHES.setdefault(marker, []).append(proc.pid)
            try:
                out, err = proc.communicate(input, timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                raise
        p = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        p.elapsed = time.monotonic() - t0
        return p

    def popen(self, args, env=None, marker=None):
        cmd = [self.mpiexec]
        if marker:
            cmd += ["-genv", "WEFT_TEST_MARKER", marker]
        cmd += list(args)
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, text=True, env=self.env(env))
        if marker:
            LAUNCHES.setdefault(marker, []).append(proc.pid)
        return proc


@pytest.fixture
def launcher():
    return Launcher()


@pytest.fixture
def marker():
    m = "wm" + uuid.uuid4().hex[:12]
    yield m
    assert_no_leftovers(m)


def read_stdout_lines(proc, count, timeout=10):
    """Read proc's stdout (raw fd, no Python buffering) until count lines or
    timeout; returns the text read."""
    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    while data.count(b"\n") < count and time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
    return data.decode(errors="replace")


def probe_lines(stdout):
    """Parse 'probe: rank=R size=S ...' lines into dicts keyed by rank."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("probe: rank=") and " size=" in line:
            fields = dict(kv.split("=", 1) for kv in line[len("probe: "):].split())
            out[int(fields["rank"])] = fields
    return out
