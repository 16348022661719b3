# SPDX-License-Identifier: BSD-3-Clause
"""pytest wrapper for run_mpi4py.py: mpi4py 4.1.2 built against Weft, its
test suite under Weft's mpirun at np 1, 2, 3 against mpi4py_xfail.txt, and
the README's Python example.

WEFT_SKIP_MPI4PY=1 skips these tests (e.g. for a quick local run); the
first run builds mpi4py (a few minutes on 2 cores), later runs reuse the
build until install/include/mpi.h changes."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "run_mpi4py.py"

pytestmark = pytest.mark.skipif(os.environ.get("WEFT_SKIP_MPI4PY") == "1",
                                reason="WEFT_SKIP_MPI4PY=1")


def _run(args, timeout, capsys):
    cmd = [sys.executable, str(SCRIPT)] + args
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) \
            else (exc.stdout or "")
        pytest.fail(f"run_mpi4py.py {' '.join(args)} did not finish in {timeout}s\n{out}")
    return r


def _summary(out):
    lines = out.splitlines()
    for i, ln in enumerate(lines):
        if ln.startswith("== mpi4py ") and "summary" in ln:
            return "\n".join(lines[i:])
    return ""


# The build (first run only) is slow; the timeouts are generous on purpose.
@pytest.mark.timeout(1500)
def test_build_links_weft(capsys):
    """mpi4py builds from source with our mpicc, links our libmpi_abi.so.1
    and reports Weft from MPI.Get_library_version()."""
    r = _run(["--setup-only"], 1400, capsys)
    assert r.returncode == 0, r.stdout[-8000:]


@pytest.mark.timeout(300)
def test_readme_example(capsys):
    """mpirun -n 4 python -c "from mpi4py import MPI; ..." as the README shows."""
    r = _run(["--example-only"], 280, capsys)
    assert r.returncode == 0, r.stdout[-8000:]


@pytest.mark.timeout(1800)
def test_mpi4py_suite(capsys):
    """mpi4py's test suite at np 1, 2, 3: no failure outside the xfail list,
    no listed test passing, no crash or timeout."""
    r = _run(["--no-example"], 1700, capsys)
    with capsys.disabled():
        print("\n" + (_summary(r.stdout) or r.stdout[-3000:]))
    assert r.returncode == 0, r.stdout[-20000:]
