# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""The exported dynamic symbols of libmpi_abi.so.1 are exactly the MPI-5 ABI:
for every function of maint/abi/functions.tsv with in_abi_header=yes, PMPI_x is
a strong (T) and MPI_x a weak (W) definition at the same address, and nothing
else is exported except the linker-defined symbols in LINKER_SYMBOLS and the
OpenSHMEM API of include/shmem.h (same library: docs/design.md "OpenSHMEM")."""
import csv
import os
import re

from conftest import PREFIX, REPO, need, run

LIB = os.path.join(PREFIX, "lib", "libmpi_abi.so.1")
ABI_FUNCS = os.path.join(REPO, "maint", "abi", "functions.tsv")
# Symbols the toolchain may export from any shared object; never ours.
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}
# OpenSHMEM entry points and handles (include/shmem.h), incl. the deprecated names.
SHMEM_API = re.compile(r"^(shmem_\w+|SHMEM_(TEAM_WORLD|TEAM_SHARED|CTX_DEFAULT)|_my_pe|_num_pes|start_pes)$")


def abi_rows():
    with open(ABI_FUNCS, newline="") as f:
        return [r for r in csv.DictReader(f, delimiter="\t") if r["in_abi_header"] == "yes"]


def dynamic_symbols():
    out = run(["nm", "-D", "--defined-only", need(LIB)], timeout=60).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        addr, kind, name = parts
        name = name.split("@")[0]  # drop a symbol version, if any
        syms[name] = (kind, int(addr, 16))
    return syms


def test_exports_exactly_the_abi():
    syms = dynamic_symbols()
    rows = abi_rows()
    assert len(rows) == 662
    want = {r["name"] for r in rows} | {r["pmpi_symbol"] for r in rows}
    extra = sorted(s for s in set(syms) - want - LINKER_SYMBOLS if not SHMEM_API.match(s))
    missing = sorted(want - set(syms))
    assert not missing, f"{len(missing)} ABI symbols not exported, e.g. {missing[:10]}"
    assert not extra, f"{len(extra)} symbols exported beyond the ABI, e.g. {extra[:10]}"


def test_pmpi_strong_mpi_weak_same_address():
    syms = dynamic_symbols()
    bad = []
    for r in abi_rows():
        mpi, pmpi = r["name"], r["pmpi_symbol"]
        if mpi not in syms or pmpi not in syms:
            continue  # reported by test_exports_exactly_the_abi
        (mk, ma), (pk, pa) = syms[mpi], syms[pmpi]
        if pk != "T" or mk != "W" or ma != pa:
            bad.append(f"{mpi} {mk}@{ma:#x} / {pmpi} {pk}@{pa:#x}")
    assert not bad, f"{len(bad)} pairs are not PMPI strong T + MPI weak W at one address: {bad[:10]}"


def test_soname_and_dev_symlink():
    out = run(["readelf", "-d", need(LIB)], timeout=60).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    assert m and m.group(1) == "libmpi_abi.so.1", f"SONAME is {m.group(1) if m else None}"
    dev = os.path.join(PREFIX, "lib", "libmpi_abi.so")
    assert os.path.islink(dev), f"{dev} is not a symlink"
    assert os.path.realpath(dev) == os.path.realpath(LIB)
