# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""docs/STATUS.md is the generated build/STATUS.md and lists every ABI function once."""
import csv
import os
import re

from conftest import BUILD, REPO, need

ABI_FUNCS = os.path.join(REPO, "maint", "abi", "functions.tsv")
DOC = os.path.join(REPO, "docs", "STATUS.md")


def abi_functions():
    with open(ABI_FUNCS, newline="") as f:
        return [r["name"] for r in csv.DictReader(f, delimiter="\t") if r["in_abi_header"] == "yes"]


def test_docs_status_is_current():
    generated = need(os.path.join(BUILD, "STATUS.md"))
    with open(need(DOC, "`make install` copies it")) as f:
        doc = f.read()
    with open(generated) as f:
        gen = f.read()
    assert doc == gen, "docs/STATUS.md differs from build/STATUS.md: run `make install` and commit it"


def test_status_lists_all_functions():
    with open(need(DOC, "`make install` copies it")) as f:
        text = f.read()
    entries = re.findall(r"^- `(\w+)`: (implemented|missing)\b", text, re.M)
    names = [n for n, _ in entries]
    want = abi_functions()
    assert len(want) == 662
    assert len(names) == len(set(names)), "a function is listed twice"
    assert set(names) == set(want), (
        f"missing from STATUS: {sorted(set(want) - set(names))[:10]}; "
        f"unknown: {sorted(set(names) - set(want))[:10]}")
    implemented = sum(1 for _, s in entries if s == "implemented")
    m = re.search(r"\*\*(\d+) of (\d+) ABI functions implemented", text)
    assert m, "no '**N of 662 ABI functions implemented**' summary line"
    assert (int(m.group(1)), int(m.group(2))) == (implemented, 662)
