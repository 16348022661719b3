# SPDX-License-Identifier: BSD-3-Clause
"""mpirun must start a program by the path it was given, not by the target of
its symlinks: a venv's bin/python is a symlink, and following it would leave
the venv (mpi4py users run `mpirun -n 4 python ...` from venvs)."""
import os
import pathlib
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
PREFIX = pathlib.Path(os.environ.get("WEFT_PREFIX", REPO / "install"))


def test_venv_python_stays_in_venv(tmp_path):
    venv = tmp_path / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=120)
    code = "import sys; print(sys.prefix)"
    mpirun = str(PREFIX / "bin" / "mpirun")
    by_path = subprocess.run([mpirun, "-n", "2", str(venv / "bin" / "python"), "-c", code],
                             capture_output=True, text=True, timeout=60)
    assert by_path.returncode == 0, by_path.stderr
    assert by_path.stdout.split() == [str(venv)] * 2
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    by_name = subprocess.run([mpirun, "-n", "1", "python", "-c", code], capture_output=True,
                             text=True, timeout=60, env=env)
    assert by_name.returncode == 0, by_name.stderr
    assert by_name.stdout.strip() == str(venv)
