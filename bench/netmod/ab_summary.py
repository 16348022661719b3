#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Summarise netns_ab.sh / netns_compare.sh output: per variant and size, the
minimum and the median over rounds (a markdown table per benchmark)."""
import collections
import re
import statistics
import sys


def sig3(v):
    """Three significant digits: latencies of 0.2 us and bandwidths of
    20000 MB/s alike keep their differences."""
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def main(path):
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    cur = None
    for line in open(path):
        m = re.match(r"### (\S+) (\S+) round", line)
        if m:
            cur = (m.group(2), m.group(1))
            continue
        p = line.split()
        if cur and len(p) == 2 and p[0].isdigit():
            try:
                runs[cur][int(p[0])].append(float(p[1]))
            except ValueError:
                pass
    for bench in sorted({k[0] for k in runs}):
        labels = [k for k in runs if k[0] == bench]
        sizes = sorted({s for k in labels for s in runs[k]})
        print(f"## {bench}: min / median over rounds")
        print("| bytes | " + " | ".join(k[1] for k in labels) + " |")
        print("|---|" + "---|" * len(labels))
        for s in sizes:
            cells = [f"{sig3(min(runs[k][s]))} / {sig3(statistics.median(runs[k][s]))}"
                     if runs[k][s] else "-" for k in labels]
            print(f"| {s} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
