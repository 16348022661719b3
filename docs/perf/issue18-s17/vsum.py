import sys, statistics, collections
# vsum.py FILE: median per (bench, size) of new / base / openmpi, and ratios
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4:
        d[(p[1], int(p[2]), p[0])].append(float(p[3]))
benches = sorted({k[0] for k in d}, key=lambda b: b)
print("| bench | bytes | new | base | Open MPI | new/base | new/Open MPI |")
print("|---|---:|---:|---:|---:|---:|---:|")
for b in benches:
    for s in sorted({k[1] for k in d if k[0] == b}):
        m = {v: statistics.median(d[(b, s, v)]) for v in ("new", "base", "openmpi") if d[(b, s, v)]}
        print(f"| {b} | {s} | {m['new']:.3g} | {m['base']:.3g} | {m['openmpi']:.3g} | "
              f"{m['new']/m['base']:.2f} | {m['new']/m['openmpi']:.2f} |")
