#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Write default_rules.inc (a C string literal) from default.rules, after
checking that every rule line has the shape `<collective> <intra|inter>
[conditions] : <algorithm>` with a row of that name in algorithms.def (the
library only finds a bad line at the first collective of every program).
Usage: gen_rules_inc.py [--check]  (--check: exit 1 if the .inc is stale)."""
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent


def render(text):
    out = ["/* GENERATED from default.rules by gen_rules_inc.py: do not edit. */"]
    for line in text.splitlines():
        esc = line.replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'"{esc}\\n"')
    return "\n".join(out) + "\n"


def known_algorithms():
    text = (HERE.parent / "algorithms.def").read_text()
    rows = re.findall(r"WEFT_COLL_ALG\(\s*\w+,\s*(\w+),\s*\w+,\s*(\w+),\s*(\w+)", text)
    return {(coll, kind, alg) for coll, kind, alg in rows}


def check_rules(text):
    known = known_algorithms()
    bad = []
    for no, line in enumerate(text.splitlines(), 1):
        rule = line.split("#", 1)[0].strip()
        if not rule:
            continue
        m = re.fullmatch(r"(\w+) (intra|inter)((?: \S+)*) : (\w+)", rule)
        if m is None:
            bad.append(f"default.rules:{no}: not '<collective> <intra|inter> [conditions] : <algorithm>': {line}")
        elif (m.group(1), m.group(2), m.group(4)) not in known:
            bad.append(f"default.rules:{no}: no algorithm {m.group(4)} for {m.group(1)} {m.group(2)} "
                       "in algorithms.def")
    if bad:
        sys.exit("\n".join(bad))


def main():
    text = (HERE / "default.rules").read_text()
    check_rules(text)
    want = render(text)
    inc = HERE / "default_rules.inc"
    if "--check" in sys.argv[1:]:
        if not inc.exists() or inc.read_text() != want:
            sys.exit("src/coll/tuning/default_rules.inc is stale: run gen_rules_inc.py")
        return
    inc.write_text(want)


if __name__ == "__main__":
    main()
