# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""The collective entry impls are generated (gen_api.py, directive coll): every
listed collective has exactly one impl, in build/gen/coll_gen.c, none is left
hand-written in src/coll, and an int count/displacement array without a
COUNTS/DISPLS(len) kind is refused instead of being passed through unwidened."""
import os
import re
import shutil
import subprocess
import sys

from conftest import BUILD, REPO, need

KINDS = os.path.join(REPO, "src", "api", "kinds")
GEN = os.path.join(REPO, "src", "api", "gen_api.py")
FUNCS = os.path.join(REPO, "maint", "abi", "functions.tsv")


def coll_lines():
    with open(os.path.join(KINDS, "coll.txt")) as f:
        return [l.split()[0] for l in f if l.startswith("MPI_") and l.rstrip().endswith(": coll")]


def test_every_collective_impl_is_generated_once():
    names = coll_lines()
    assert len(names) >= 90, "coll.txt lost its collective lines"
    with open(need(os.path.join(BUILD, "gen", "coll_gen.c"))) as f:
        gen = f.read()
    defined = re.findall(r"^int (weft_\w+_impl)\(", gen, re.M)
    assert len(defined) == len(set(defined)), "an impl is generated twice"
    want = {"weft_" + n[4:].lower() + "_impl" for n in names}
    assert set(defined) == want, (sorted(want - set(defined))[:5], sorted(set(defined) - want)[:5])
    for root, _, files in os.walk(os.path.join(REPO, "src", "coll")):
        for fn in files:
            if fn.endswith(".c"):
                with open(os.path.join(root, fn)) as f:
                    text = f.read()
                left = [d for d in want if re.search(r"^int " + d + r"\(", text, re.M)]
                assert not left, f"{fn} still defines generated impls: {left[:3]}"


def test_int_arrays_are_widened_with_the_right_length():
    with open(need(os.path.join(BUILD, "gen", "coll_gen.c"))) as f:
        gen = f.read()

    def body(impl):
        m = re.search(r"^int " + impl + r"\(.*?^}", gen, re.M | re.S)
        assert m, impl
        return m.group(0)
    # int arrays: widened with the number of significant elements at this rank
    assert "weft_coll_widen_counts(recvcounts, weft_coll_root_peers(root, comm)" in body("weft_gatherv_impl")
    assert "weft_coll_widen_counts(sendcounts, weft_coll_topo_degree(comm, 1)" in body(
        "weft_neighbor_alltoallw_init_impl")
    assert "WEFT_COLL_MODE_PERSISTENT, request)" in body("weft_neighbor_alltoallw_init_impl")
    # large-count forms pass their arrays through; non-blocking forms pass the request
    b = body("weft_ialltoallv_c_impl")
    assert "widen" not in b and "WEFT_COLL_MODE_NONBLOCKING, request)" in b
    assert "WEFT_COLL_MODE_BLOCKING, NULL)" in body("weft_barrier_impl")


def test_generator_refuses_an_unwidened_int_array(tmp_path):
    kinds = tmp_path / "kinds"
    shutil.copytree(KINDS, kinds)
    coll = kinds / "coll.txt"
    text = coll.read_text()
    text2 = re.sub(r"^(MPI_Allgatherv .*?) recvcounts=COUNTS\(peer\)", r"\1", text, flags=re.M)
    assert text2 != text
    coll.write_text(text2)
    p = subprocess.run([sys.executable, GEN, "--functions", FUNCS, "--kinds-dir", str(kinds),
                        "--out-dir", str(tmp_path / "out"), "--status", str(tmp_path / "S.md")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0
    assert "MPI_Allgatherv" in p.stderr and "recvcounts" in p.stderr and "COUNTS" in p.stderr
