# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Shared paths and helpers for tests/tools.

Environment:
  WEFT_PREFIX  install prefix to test (default <repo>/install)
  WEFT_BUILD   build directory (default <repo>/build)
"""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PREFIX = os.path.abspath(os.environ.get("WEFT_PREFIX", os.path.join(REPO, "install")))
BUILD = os.path.abspath(os.environ.get("WEFT_BUILD", os.path.join(REPO, "build")))


def run(cmd, timeout=120, env=None, check=True, **kw):
    """Run cmd (a list), capture text output; on failure show it all."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def need(path, what="run `make` first"):
    """Fail (not skip) when an installed file the test is about is missing."""
    if not os.path.exists(path):
        pytest.fail(f"{path} does not exist ({what})")
    return path


@pytest.fixture
def prefix():
    return PREFIX


@pytest.fixture
def build():
    return BUILD
