#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Write default_rules.inc (a C string literal) from default.rules.
Usage: gen_rules_inc.py [--check]  (--check: exit 1 if the .inc is stale)."""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent


def render(text):
    out = ["/* GENERATED from default.rules by gen_rules_inc.py: do not edit. */"]
    for line in text.splitlines():
        esc = line.replace("\\", "\\\\").replace('"', '\\"')
        out.append(f'"{esc}\\n"')
    return "\n".join(out) + "\n"


def main():
    want = render((HERE / "default.rules").read_text())
    inc = HERE / "default_rules.inc"
    if "--check" in sys.argv[1:]:
        if not inc.exists() or inc.read_text() != want:
            sys.exit("src/coll/tuning/default_rules.inc is stale: run gen_rules_inc.py")
        return
    inc.write_text(want)


if __name__ == "__main__":
    main()
