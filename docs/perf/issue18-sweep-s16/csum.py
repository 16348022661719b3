import sys, re, statistics as st, collections
d = collections.defaultdict(lambda: collections.defaultdict(list)); v=None
for line in open(sys.argv[1]):
    m = re.match(r'### (\S+) round', line)
    if m: v = m.group(1); continue
    f = line.split()
    if len(f) >= 2 and f[0].isdigit():
        try: d[v][int(f[0])].append(float(f[1]))
        except ValueError: pass
vs = list(d)
print("| size | " + " | ".join(vs) + " |"); print("|---" * (len(vs) + 1) + "|")
for s in sorted(d[vs[0]]):
    print(f"| {s} | " + " | ".join(f"{st.median(d[x][s]):.3f}" if d[x][s] else "-" for x in vs) + " |")
