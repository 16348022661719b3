#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Median [min-max] per size and variant of netns_variants.sh output
(lines: ROUND VARIANT SIZE VALUE)."""
import collections
import statistics
import sys

values = collections.defaultdict(list)
variants = []
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) != 4:
        continue
    values[(p[1], int(p[2]))].append(float(p[3]))
    if p[1] not in variants:
        variants.append(p[1])
print("| size | " + " | ".join(variants) + " |")
print("|---:|" + "---:|" * len(variants))
for s in sorted({k[1] for k in values}):
    cells = []
    for v in variants:
        x = values.get((v, s))
        cells.append("%.3g [%.3g-%.3g]" % (statistics.median(x), min(x), max(x)) if x else "-")
    print(f"| {s} | " + " | ".join(cells) + " |")
