# SPDX-License-Identifier: BSD-3-Clause
"""Run the MPI test programs of tests/mpi/manifest.txt under mpirun.

Environment: WEFT_PREFIX (install prefix, default <repo>/install), WEFT_BUILD
(build dir, default <repo>/build). WEFT_TEST_LAUNCHER overrides the launcher
command (e.g. MPICH's mpiexec, with LD_LIBRARY_PATH pointing at its
libmpi_abi.so.1, to check a test against another library).
"""
import os
import pathlib
import subprocess

import pytest

from conftest import BUILD, launcher

MANIFEST = pathlib.Path(__file__).with_name("manifest.txt")


def entries():
    out = []
    for line in MANIFEST.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        name, nps, opts = words[0], words[1], dict(w.split("=", 1) for w in words[2:])
        env = dict(kv.split("=", 1) for kv in opts.get("env", "").split(";") if kv)
        args = [a for a in opts.get("args", "").split(";") if a]
        for np_ in nps.split(","):
            label = f"{name}-np{np_}" + (f"-{opts['label']}" if "label" in opts else "")
            out.append(pytest.param(name, int(np_), int(opts.get("timeout", "120")), env, args,
                                    id=label))
    return out


@pytest.mark.parametrize("name,nprocs,timeout,env,args", entries())
def test_mpi_program(name, nprocs, timeout, env, args):
    prog = BUILD / "tests" / "mpi" / name
    assert prog.exists(), f"{prog} not built"
    cmd = launcher() + ["-n", str(nprocs), str(prog)] + args
    run_env = dict(os.environ, **env)
    try:
        proc = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"timed out after {timeout}s: {' '.join(cmd)}\n"
                    f"stdout:\n{e.stdout}\nstderr:\n{e.stderr}")
    detail = f"cmd: {' '.join(cmd)}\nenv: {env}\nstdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0, f"exit code {proc.returncode}\n{detail}"
    assert "No Errors" in proc.stdout, f"no 'No Errors' line\n{detail}"
    assert "FAIL" not in proc.stdout + proc.stderr, detail
