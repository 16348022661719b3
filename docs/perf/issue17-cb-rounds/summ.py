import collections,statistics,sys
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)==4: d[(p[1],int(p[2]))].append(float(p[3]))
vs=[]
for k in d:
    if k[0] not in vs: vs.append(k[0])
sizes=sorted({k[1] for k in d})
print('size',*vs)
for s in sizes: print(s>>10,'KiB',*[ '%.0f(%.0f-%.0f)'%(statistics.median(d[(v,s)]),min(d[(v,s)]),max(d[(v,s)])) for v in vs])
