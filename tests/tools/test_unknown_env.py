# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""A WEFT_*/MV2_* variable that no tunable knows is warned about at MPI_Init,
naming the closest known variable, once per job; WEFT_WARN_UNKNOWN_ENV=0
silences it; known variables (and the launcher's own) never warn."""
import os

from conftest import PREFIX, need, run


def hello(env, np=2):
    mpiexec = need(os.path.join(PREFIX, "bin", "mpiexec"))
    prog = need(os.path.join(PREFIX, "libexec", "weft", "examples", "hello"))
    return run([mpiexec, "-n", str(np), prog], env=env, timeout=60)


def test_typo_names_closest():
    p = hello({"WEFT_SMP_EAGERSZE": "4k", "MV2_SMP_USE_CAM": "0"})
    assert p.stderr.count("WEFT_SMP_EAGERSZE is set but no Weft tunable knows it; "
                          "did you mean WEFT_SMP_EAGERSIZE?") == 1, p.stderr
    assert "MV2_SMP_USE_CAM is set but no Weft tunable knows it; did you mean MV2_SMP_USE_CMA?" \
        in p.stderr, p.stderr


def test_silenced_and_known():
    p = hello({"WEFT_SMP_EAGERSZE": "4k", "WEFT_WARN_UNKNOWN_ENV": "0"})
    assert "no Weft tunable knows" not in p.stderr, p.stderr
    p = hello({"WEFT_SMP_EAGERSIZE": "4k", "MV2_SMP_USE_CMA": "1"})
    assert "no Weft tunable knows" not in p.stderr, p.stderr
