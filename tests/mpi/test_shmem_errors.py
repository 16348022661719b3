# SPDX-License-Identifier: BSD-3-Clause
"""OpenSHMEM bad input aborts the job with a message naming the call
(OpenSHMEM has no error returns): tests/mpi/shmem_errors.c, one case per run."""
import os
import subprocess

import pytest

from conftest import PREFIX, BUILD


CASES = [  # case, nprocs, words the message must contain
    ("before-init", 1, ["shmem_my_pe", "before shmem_init"]),
    ("globals-off", 2, ["shmem_int_put", "global data is not symmetric", "WEFT_SHMEM_SYMMETRIC_GLOBALS=0"]),
    ("active-not-member", 2, ["shmem_barrier", "PE 1 is not in the active set"]),
    ("ctx-invalid", 2, ["shmem_ctx_int_put", "SHMEM_CTX_INVALID"]),
    ("ctx-options", 1, ["shmem_ctx_create", "options 0x100000"]),
    ("ctx-destroy-default", 1, ["shmem_ctx_destroy", "SHMEM_CTX_DEFAULT"]),
    ("ctx-team-pe", 2, ["shmem_ctx_int_p", "PE 1 out of range of the context's team"]),
    ("bad-pe", 2, ["shmem_int_put", "PE 2 out of range"]),
    ("not-symmetric", 2, ["shmem_int_put", "not in the symmetric heap"]),
    ("past-heap-end", 1, ["shmem_int_get", "not in the symmetric heap"]),
    ("heap-exhausted", 2, ["shmem_malloc", "symmetric heap exhausted"]),
    ("asymmetric-malloc", 2, ["shmem_malloc", "different arguments"]),
    ("bad-cmp", 1, ["shmem_int_wait_until", "cmp 42"]),
]
# The same checks when the target PE is on another node (requests, shmem_net.c):
# every PE its own node, every peer through the netmod.
NODES_ENV = {"WEFT_NETMOD_ONLY": "1", "WEFT_SHMEM_FAKE_PPN": "1"}
NODE_CASES = [
    ("bad-pe", 2, ["shmem_int_put", "PE 2 out of range"]),
    ("remote-past-heap-end", 2, ["shmem_int_get", "not in the symmetric heap"]),
    ("remote-not-symmetric", 2, ["shmem_int_put", "not in the symmetric heap"]),
    ("globals-off", 2, ["shmem_int_put", "global data is not symmetric"]),
    ("ctx-team-pe", 2, ["shmem_ctx_int_p", "PE 1 out of range of the context's team"]),
]


@pytest.mark.parametrize("case,nprocs,words,nodes",
                         [c + (False,) for c in CASES] + [c + (True,) for c in NODE_CASES],
                         ids=[c[0] for c in CASES] + [c[0] + "-nodes" for c in NODE_CASES])
def test_shmem_bad_input_aborts(case, nprocs, words, nodes):
    prog = BUILD / "tests" / "mpi" / "shmem_errors"
    assert prog.exists(), f"{prog} not built"
    cmd = [str(PREFIX / "bin" / "oshrun"), "-n", str(nprocs), str(prog), case]
    env = dict(os.environ, **(NODES_ENV if nodes else {}))
    if case == "globals-off":
        env["WEFT_SHMEM_SYMMETRIC_GLOBALS"] = "0"
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    detail = f"cmd: {' '.join(cmd)}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}"
    assert proc.returncode != 0, detail
    assert "NOT ABORTED" not in proc.stdout, detail
    for w in words:
        assert w in proc.stderr, f"missing {w!r}\n{detail}"
