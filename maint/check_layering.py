#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) 2026 The Weft authors
"""Check every project #include in src/ against the layering table of
STYLE.md section 3.2 (who may include whom). Exit 1 and list violations.

Includes are spelled from the src/ root ("core/comm.h"); a bare name
("tunables.def") is a file in the including file's own folder. Generated
headers in the build dir: api_impl.h (impl prototypes, for api and the
modules that define impls), coll_gen.h (the generated collective impls'
calls, for coll) and weft_build_config.h (anyone).
"""
import pathlib
import re
import sys

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"

# layer -> prefixes it may include (its own folder is always allowed)
ALLOWED = {
    "util": [],
    "pmi": ["util/"],
    "transport": ["util/", "pmi/", "transport/transport.h"],
    "core": ["util/", "pmi/", "transport/transport.h", "transport/shm/shm.h", "core/", "api_impl.h"],
    "rma": ["util/", "core/", "transport/transport.h", "api_impl.h"],
    "coll": ["util/", "core/", "transport/shm/shm_coll.h", "coll/", "api_impl.h", "coll_gen.h"],
    "io": ["util/", "core/", "coll/coll.h", "api_impl.h"],
    "shmem": ["util/", "core/", "rma/", "coll/", "transport/transport.h"],
    "api": ["core/", "coll/", "rma/", "io/", "api/", "api_impl.h", "util/"],
    "launcher": ["util/", "pmi/", "launcher/"],
}
ANYONE = {"weft_build_config.h", "weft_coll_alg_values.h"}
# Private headers: only their own folder may include them.
PRIVATE = re.compile(r"_internal\.h$")


def layer_of(path):
    parts = path.relative_to(SRC).parts
    return parts[0]


def main():
    bad = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".c", ".h", ".def", ".inc"):
            continue
        layer = layer_of(path)
        folder = path.parent.relative_to(SRC).as_posix() + "/"
        for lineno, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            if (path.parent / inc).exists() and (path.parent / inc).resolve().is_relative_to(
                    SRC / layer):
                continue  # relative to the including file, inside its own layer
            if inc in ANYONE:
                continue
            if PRIVATE.search(inc) and not (inc.startswith(folder) or
                                            inc.startswith(layer + "/")):
                bad.append(f"{path.relative_to(SRC.parent)}:{lineno}: private header {inc}")
                continue
            if inc.startswith(layer + "/"):
                continue
            if not any(inc == a or (a.endswith("/") and inc.startswith(a)) for a in ALLOWED.get(layer, [])):
                bad.append(f"{path.relative_to(SRC.parent)}:{lineno}: layer '{layer}' may not include {inc}")
    for b in bad:
        print(b)
    if bad:
        print(f"{len(bad)} layering violation(s); see STYLE.md section 3.2")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
