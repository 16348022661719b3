import sys, re
# rows more than 3% behind in a compare.md
f = sys.argv[1]; cur = None; n = 0; tot = 0; rows = []
for line in open(f):
    m = re.match(r'### (\S+)', line)
    if m: cur = m.group(1); continue
    m = re.match(r'\| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|', line)
    if m and cur:
        tot += 1
        r = float(m.group(4))
        if r < 0.97: n += 1; rows.append(f"{cur} {m.group(1)} {m.group(2)}/{m.group(3)} ({r})")
print(f"{f}: {n}/{tot} behind >3%")
for r in rows: print("  ", r)
