import sys, statistics as st, collections
d=collections.defaultdict(list)
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)<4: continue
    d[(p[-3],int(p[-2]),'_'.join(p[:-3]).replace('WEFT_SMP_',''))].append(float(p[-1]))
cfgs=[]
for k in d:
    if k[2] not in cfgs: cfgs.append(k[2])
rows=sorted(set((k[0],k[1]) for k in d))
print("bench size "+" ".join(cfgs))
for b,s in rows:
    print(b,s," ".join("%.2f"%st.median(d[(b,s,c)]) if d[(b,s,c)] else "-" for c in cfgs))
