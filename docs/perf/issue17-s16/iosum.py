import sys, re, statistics as st, collections
d = collections.defaultdict(lambda: collections.defaultdict(list))
v = None
for line in open(sys.argv[1]):
    m = re.match(r'### (\S+) round', line)
    if m: v = m.group(1); continue
    f = line.split()
    if len(f) == 5 and f[0].isdigit():
        d[v][int(f[0])].append([float(x) for x in f[1:]])
cols = ["ind w", "ind r", "coll w", "coll r"]
vs = list(d)
print("| size | col | " + " | ".join(vs) + " | ratios |")
print("|---" * (len(vs) + 4) + "|")
for s in sorted(d[vs[0]]):
    for c in range(4):
        med = {x: st.median(r[c] for r in d[x][s]) for x in vs}
        print(f"| {s} | {cols[c]} | " + " | ".join(f"{med[x]:.0f}" for x in vs) +
              f" | {med['new']/med['mpich']:.2f} | {med['new']/med['old']:.2f} |")
