# SPDX-License-Identifier: BSD-3-Clause
"""Netmod startup: libfabric must not read /proc/kallsyms, nor load the PSM
libraries on a host without PSM hardware (ofi_quirks.c).

Debian's libfabric reads the kernel symbol table at its first fi_getinfo
(the verbs provider's GPU dma-buf probe), 0.1-0.25 s of CPU per process.
Weft redirects libfabric's fopen of that one file. It is also linked
against libpsm2 and libpsm_infinipath, whose constructors sleep 0.1 s each;
Weft loads inert stand-ins with their names first (lib/weft/ofi-psm). The
tests trace a two-rank netmod job's file opens (strace) and library
initialisers (LD_DEBUG): no read of /proc/kallsyms and no initialiser of a
real PSM library by default, and both with WEFT_OFI_KERNEL_SYMBOLS=1 or
WEFT_OFI_PSM=load (so each check can fail), and the job's output is right
either way.
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
    return opens


def psm_inits(extra_env):
    """(real, stand-in) PSM libraries whose initialisers ran in a two-rank
    netmod job, from the dynamic loader's own log (LD_DEBUG=files)."""
    env = dict(os.environ, WEFT_NETMOD_ONLY="1", LD_DEBUG="files", **extra_env)
    cmd = [str(PREFIX / "bin" / "mpirun"), "-n", "2", str(BUILD / "tests" / "mpi" / "p2p_ring")]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    assert "No Errors" in proc.stdout, proc.stdout
    inits = [line for line in proc.stderr.splitlines() if "calling init:" in line]
    assert any("libfabric.so" in line for line in inits), "libfabric never loaded: proves nothing"
    psm = [line for line in inits if "libpsm" in line]
    standin = sum("/weft/ofi-psm/" in line for line in psm)
    return len(psm) - standin, standin


def test_libfabric_does_not_read_kallsyms(tmp_path):
    assert traced_run(tmp_path, {}).count('"/proc/kallsyms"') == 0


def test_kernel_symbols_knob_restores_the_read(tmp_path):
    assert traced_run(tmp_path, {"WEFT_OFI_KERNEL_SYMBOLS": "1"}).count('"/proc/kallsyms"') > 0


def psm_linked():
    lib = "/usr/lib/x86_64-linux-gnu/libfabric.so.1"
    out = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout \
        if shutil.which("readelf") and os.path.exists(lib) else ""
    return "libpsm" in out


def test_psm_stand_ins_replace_the_real_libraries():
    if not psm_linked():
        pytest.skip("this libfabric links no PSM library: nothing to stand in for")
    if any(any(pathlib.Path("/dev").glob(p)) for p in ("hfi1*", "ipath*")):
        pytest.skip("this host has a PSM device: the real libraries are loaded")
    real, standin = psm_inits({})
    assert standin == 4 and real == 0, (real, standin)  # two libraries in each of two ranks


def test_psm_knob_loads_the_real_libraries():
    if not psm_linked():
        pytest.skip("this libfabric links no PSM library")
    real, standin = psm_inits({"WEFT_OFI_PSM": "load"})
    assert real == 4 and standin == 0, (real, standin)
