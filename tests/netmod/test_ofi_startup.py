# SPDX-License-Identifier: BSD-3-Clause
"""Netmod startup: libfabric must not read /proc/kallsyms (ofi_quirks.c).

Debian's libfabric reads the kernel symbol table at its first fi_getinfo
(the verbs provider's GPU dma-buf probe), 0.1-0.25 s of CPU per process.
Weft redirects libfabric's fopen of that one file. The test traces the
file opens of a two-rank netmod job: none of /proc/kallsyms by default,
and some with WEFT_OFI_KERNEL_SYMBOLS=1 (so the check itself can fail), and
the job's output is right either way.
"""
import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PREFIX = pathlib.Path(os.environ.get("WEFT_PREFIX", REPO / "install"))
BUILD = pathlib.Path(os.environ.get("WEFT_BUILD", REPO / "build"))


def traced_run(tmp_path, extra_env):
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed (maint/install-deps.sh installs it)")
    trace = tmp_path / "trace"
    env = dict(os.environ, WEFT_NETMOD_ONLY="1", **extra_env)
    cmd = ["strace", "-f", "-qq", "-e", "trace=openat,open", "-o", str(trace),
           str(PREFIX / "bin" / "mpirun"), "-n", "2", str(BUILD / "tests" / "mpi" / "p2p_ring")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 and "PTRACE" in proc.stderr.upper():
        pytest.skip(f"strace cannot trace here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No Errors" in proc.stdout, proc.stdout + proc.stderr
    opens = trace.read_text()
    assert "libfabric.so" in opens, "the job never opened libfabric: the test proves nothing"
    return opens.count('"/proc/kallsyms"')


def test_libfabric_does_not_read_kallsyms(tmp_path):
    assert traced_run(tmp_path, {}) == 0


def test_kernel_symbols_knob_restores_the_read(tmp_path):
    assert traced_run(tmp_path, {"WEFT_OFI_KERNEL_SYMBOLS": "1"}) > 0
