# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Paths and the launcher for tests/mpi (imported as `from conftest import ...`).

Environment:
  WEFT_PREFIX         install prefix to test (default <repo>/install)
  WEFT_BUILD          build directory holding the test programs (default <repo>/build)
  WEFT_TEST_LAUNCHER  launcher command for the manifest's programs and the job
                      report tests (default PREFIX/bin/mpirun), e.g. MPICH's
                      mpiexec with LD_LIBRARY_PATH at its libmpi_abi.so.1, to
                      check a test against another library
"""
import os
import pathlib
import shlex

REPO = pathlib.Path(__file__).resolve().parents[2]
PREFIX = pathlib.Path(os.environ.get("WEFT_PREFIX", REPO / "install"))
BUILD = pathlib.Path(os.environ.get("WEFT_BUILD", REPO / "build"))


def launcher():
    """The launcher command as a list (WEFT_TEST_LAUNCHER or Weft's mpirun)."""
    return shlex.split(os.environ.get("WEFT_TEST_LAUNCHER", str(PREFIX / "bin" / "mpirun")))
