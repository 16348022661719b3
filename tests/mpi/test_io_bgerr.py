# SPDX-License-Identifier: BSD-3-Clause
"""Errors of file access run in the background carry their message to the
call that completes the access (tests/mpi/io_bgerr.c, one failure under
MPI_ERRORS_ARE_FATAL on the file per run): the abort message names the
completing call, the call that started the access, the path and the class."""
import os
import subprocess

import pytest

from conftest import PREFIX, BUILD


CASES = [  # case, words the message must contain
    ("ind", ["fatal error: MPI_Wait: MPI_File_iwrite_at, in the background: file \"/dev/full\": write of",
             "No space left on device", "MPI_ERR_NO_SPACE"]),
    ("coll", ["fatal error: MPI_Wait: MPI_File_iwrite_at_all, in the background: file \"/dev/full\"",
              "MPI_ERR_NO_SPACE"]),
    ("split", ["fatal error: MPI_File_write_all_end: MPI_File_write_all_begin, in the background: "
               "file \"/dev/full\"", "MPI_ERR_NO_SPACE"]),
]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("nprocs", [1, 2, 4])
@pytest.mark.parametrize("case,words", CASES, ids=[c[0] for c in CASES])
def test_background_error_message(case, words, nprocs):
    if not os.access("/dev/full", os.W_OK):
        pytest.skip("no writable /dev/full (the ENOSPC source of this test)")
    prog = BUILD / "tests" / "mpi" / "io_bgerr"
    assert prog.exists(), f"{prog} not built"
    cmd = [str(PREFIX / "bin" / "mpiexec"), "-n", str(nprocs), str(prog), case]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=100)
    detail = f"cmd: {' '.join(cmd)}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-3000:]}"
    assert proc.returncode != 0, detail
    assert "NOT ABORTED" not in proc.stdout, detail
    for w in words:
        assert w in proc.stderr, f"missing {w!r}\n{detail}"
