import json, sys, glob, statistics, collections
d = sys.argv[1]; benches = sys.argv[2].split(",") if len(sys.argv) > 2 else None
vals = collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(d + "/raw/r*-*.json"):
    j = json.load(open(f)); side = "weft" if "-a-" in f else "peer"
    for r in j["records"]:
        if "comm_us" not in r: continue
        vals[(j["benchmark"], r["size"])][side].append((r["comm_us"], r["overall_us"], r["overlap_pct"]))
for (b, s) in sorted(vals, key=lambda k: (k[0], k[1] or 0)):
    if benches and b not in benches: continue
    w = vals[(b, s)]["weft"]; p = vals[(b, s)]["peer"]
    if not w or not p: continue
    wc = statistics.median(x[0] for x in w); pc = statistics.median(x[0] for x in p)
    wo = statistics.median(x[1] for x in w); po = statistics.median(x[1] for x in p)
    wl = statistics.median(x[2] for x in w); pl = statistics.median(x[2] for x in p)
    flag = " <<" if wc > pc * 1.03 else ""
    print(f"{b:22s} {s or 0:>8d} pure {wc:9.2f}/{pc:9.2f}  overall {wo:9.2f}/{po:9.2f}  ovl {wl:5.1f}/{pl:5.1f}{flag}")
