# SPDX-License-Identifier: BSD-3-Clause
"""Median per (benchmark, size) over the rounds of run.sh output: median.py raw.txt"""
import re, statistics, sys
data = {}
cur = None
for line in open(sys.argv[1]):
    line = line.rstrip()
    if line.startswith('--- '):
        cur = line[4:]; continue
    if line.startswith('===') or not line.strip() or line.startswith('#') or line == 'done':
        continue
    parts = line.split()
    if cur == 'osh_atomic_latency' and len(parts) == 6:
        for name, v in zip(['fetch_add','add','cswap','swap','fetch','set'], parts):
            data.setdefault((cur, name), []).append(float(v))
        continue
    if len(parts) >= 2:
        try:
            data.setdefault((cur, parts[0]), []).append(float(parts[1]))
        except ValueError:
            pass
for (b, k), v in data.items():
    print(f"{b:28s} {k:>10s} median {statistics.median(v):10.2f}  n={len(v)} min {min(v):.2f} max {max(v):.2f}")
