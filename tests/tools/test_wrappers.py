# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""The compiler wrappers (mpicc, mpicxx, mpic++), the pkg-config files and
CMake's FindMPI against an install: flags shown, programs built that run as a
singleton (no launcher) and, when <prefix>/bin/mpirun exists, under mpirun -n 2."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import PREFIX, REPO, need, run

BIN = os.path.join(PREFIX, "bin")
INC = os.path.join(PREFIX, "include")
LIB = os.path.join(PREFIX, "lib")
MPIRUN = os.path.join(BIN, "mpirun")

C_PROG = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    printf("wrapped-c %d/%d\n", rank, size);
    return MPI_Finalize();
}
"""

CXX_PROG = r"""
#include <mpi.h>
#include <iostream>
#include <memory>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    auto rank = std::make_unique<int>(-1);
    int size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, rank.get());
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::cout << "wrapped-cxx " << *rank << "/" << size << std::endl;
    return MPI_Finalize();
}
"""


def wrapper(name):
    return need(os.path.join(BIN, name))


def clean_env():
    """No compiler overrides from the caller's shell (tests set their own)."""
    drop = {"WEFT_CC", "WEFT_CXX", "MPICH_CC", "MPICH_CXX", "OMPI_CC", "OMPI_CXX"}
    return {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PMI_")}


def w(name, *args, env=None, **kw):
    e = clean_env()
    e.update(env or {})
    p = subprocess.run([wrapper(name), *args], capture_output=True, text=True, timeout=120, env=e,
                       **kw)
    assert p.returncode == 0, f"{name} {args}: {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p.stdout.strip()


def expect_singleton(exe, marker):
    p = run([exe], timeout=60)
    assert f"{marker} 0/1" in p.stdout, p.stdout + p.stderr


def expect_mpirun(exe, marker, n=2):
    if not os.access(MPIRUN, os.X_OK):
        pytest.skip("no <prefix>/bin/mpirun yet")
    p = run([MPIRUN, "-n", str(n), exe], timeout=120)
    got = sorted(line for line in p.stdout.splitlines() if line.startswith(marker))
    assert got == sorted(f"{marker} {r}/{n}" for r in range(n)), p.stdout + p.stderr


def link_flags_ok(text):
    assert f"-L{LIB}" in text
    assert f"-Wl,-rpath,{LIB}" in text
    assert re.search(r"(^|\s)-lmpi_abi(\s|$)", text)


@pytest.mark.parametrize("name", ["mpicc", "mpicxx", "mpic++"])
def test_show(name):
    out = w(name, "-show", "foo.c", "-o", "foo")
    assert f"-I{INC}" in out and " foo.c -o foo " in f" {out} "
    link_flags_ok(out)
    out_c = w(name, "-show", "-c", "foo.c")
    assert f"-I{INC}" in out_c and "-lmpi_abi" not in out_c and f"-L{LIB}" not in out_c


@pytest.mark.parametrize("name", ["mpicc", "mpicxx"])
def test_info_options(name):
    compile_info = w(name, "-compile-info")
    assert f"-I{INC}" in compile_info and "-lmpi_abi" not in compile_info
    assert compile_info.split()[0] == w(name, "-show").split()[0]  # starts with the compiler
    link_info = w(name, "-link-info")
    link_flags_ok(link_info)
    assert w(name, "-compile_info") == compile_info and w(name, "-link_info") == link_info
    assert w(name, "-showme:compile") == f"-I{INC}"
    link_flags_ok(w(name, "-showme:link"))
    assert w(name, "-showme:incdirs") == INC and w(name, "-showme:libdirs") == LIB


def test_mpic_plus_plus_is_mpicxx():
    assert os.path.islink(os.path.join(BIN, "mpic++"))
    assert os.path.realpath(os.path.join(BIN, "mpic++")) == os.path.realpath(wrapper("mpicxx"))


@pytest.mark.parametrize("name,var", [("mpicc", "WEFT_CC"), ("mpicc", "MPICH_CC"),
                                      ("mpicc", "OMPI_CC"), ("mpicxx", "WEFT_CXX"),
                                      ("mpicxx", "MPICH_CXX"), ("mpicxx", "OMPI_CXX")])
def test_compiler_env_override(name, var):
    assert w(name, "-show", "a.c", env={var: "my-compiler"}).split()[0] == "my-compiler"


def test_compiler_option_override():
    assert w("mpicc", "-cc=other-cc", "-show", "a.c").split()[0] == "other-cc"
    assert w("mpicxx", "-cxx=other-cxx", "-show", "a.cpp").split()[0] == "other-cxx"
    assert w("mpicc", "-show", "-cc=x", "a.c", env={"MPICH_CC": "y"}).split()[0] == "x"


def test_version():
    with open(os.path.join(REPO, "VERSION")) as f:
        version = f.read().strip()
    assert f"Weft {version}" in w("mpicc", "--version")


def test_args_with_spaces_survive(tmp_path):
    src = tmp_path / "sp ace.c"
    src.write_text(C_PROG)
    exe = tmp_path / "with space"
    w("mpicc", "-DGREETING=\"a b\"", str(src), "-o", str(exe))
    expect_singleton(str(exe), "wrapped-c")


@pytest.fixture(scope="module")
def c_exe(tmp_path_factory):
    d = tmp_path_factory.mktemp("mpicc")
    (d / "hello.c").write_text(C_PROG)
    w("mpicc", "-Wall", "-Werror", "-c", str(d / "hello.c"), "-o", str(d / "hello.o"))
    w("mpicc", str(d / "hello.o"), "-o", str(d / "hello"))
    return str(d / "hello")


@pytest.fixture(scope="module")
def cxx_exe(tmp_path_factory):
    d = tmp_path_factory.mktemp("mpicxx")
    (d / "hello.cpp").write_text(CXX_PROG)
    w("mpicxx", "-std=c++17", "-Wall", "-Werror", str(d / "hello.cpp"), "-o", str(d / "hello"))
    return str(d / "hello")


def test_c_program_runs_singleton(c_exe):
    out = run(["readelf", "-d", c_exe], timeout=60).stdout
    assert LIB in out and "libmpi_abi.so.1" in out  # rpath and NEEDED, no LD_LIBRARY_PATH
    expect_singleton(c_exe, "wrapped-c")


def test_cxx_program_runs_singleton(cxx_exe):
    expect_singleton(cxx_exe, "wrapped-cxx")


def test_mpic_plus_plus_builds(tmp_path):
    (tmp_path / "p.cpp").write_text(CXX_PROG)
    w("mpic++", str(tmp_path / "p.cpp"), "-o", str(tmp_path / "p"))
    expect_singleton(str(tmp_path / "p"), "wrapped-cxx")


def test_c_program_under_mpirun(c_exe):
    expect_mpirun(c_exe, "wrapped-c")


def test_cxx_program_under_mpirun(cxx_exe):
    expect_mpirun(cxx_exe, "wrapped-cxx")


# --- pkg-config ------------------------------------------------------------

@pytest.mark.parametrize("pc", ["weft", "mpi"])
def test_pkg_config(pc, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.skip("pkg-config not installed")
    need(os.path.join(LIB, "pkgconfig", f"{pc}.pc"))
    env = {"PKG_CONFIG_PATH": os.path.join(LIB, "pkgconfig")}
    assert run(["pkg-config", "--cflags", pc], env=env).stdout.split() == [f"-I{INC}"]
    libs = run(["pkg-config", "--libs", pc], env=env).stdout
    link_flags_ok(libs)
    with open(os.path.join(REPO, "VERSION")) as f:
        assert run(["pkg-config", "--modversion", pc], env=env).stdout.strip() == f.read().strip()
    (tmp_path / "p.c").write_text(C_PROG)
    cflags = run(["pkg-config", "--cflags", "--libs", pc], env=env).stdout.split()
    run(["cc", str(tmp_path / "p.c"), "-o", str(tmp_path / "p"), *cflags])
    expect_singleton(str(tmp_path / "p"), "wrapped-c")


# --- CMake FindMPI -----------------------------------------------------------

@pytest.fixture(scope="module")
def findmpi_build(tmp_path_factory):
    for tool in ("cmake", "ninja"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed")
    b = tmp_path_factory.mktemp("findmpi")
    src = os.path.join(REPO, "tests", "tools", "findmpi")
    env = clean_env()
    p = subprocess.run(["cmake", "-S", src, "-B", str(b), "-G", "Ninja",
                        f"-DMPI_C_COMPILER={wrapper('mpicc')}",
                        f"-DMPI_CXX_COMPILER={wrapper('mpicxx')}"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    run(["cmake", "--build", str(b)], timeout=300)
    return b, p.stdout


def test_findmpi_configures(findmpi_build):
    _, log = findmpi_build
    assert "WEFT_FINDMPI MPI_C_VERSION=5.0" in log, log
    assert f"WEFT_FINDMPI MPI_C_INCLUDE_DIRS={INC}" in log, log
    m = re.search(r"WEFT_FINDMPI MPI_C_LIBRARIES=(\S+)", log)
    assert m and os.path.realpath(m.group(1)) == os.path.realpath(os.path.join(LIB, "libmpi_abi.so.1")), log


def test_findmpi_programs_run(findmpi_build):
    b, _ = findmpi_build
    for exe, marker in (("x", "findmpi-c"), ("xx", "findmpi-cxx")):
        p = run([str(b / exe)], timeout=60)
        assert re.search(rf"^{marker} rank 0 of 1\b", p.stdout, re.M), p.stdout + p.stderr
    if os.access(MPIRUN, os.X_OK):
        p = run([MPIRUN, "-n", "2", str(b / "x")], timeout=120)
        assert sorted(re.findall(r"findmpi-c rank (\d) of 2", p.stdout)) == ["0", "1"], p.stdout
