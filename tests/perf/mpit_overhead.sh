#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# MPI_T overhead benchmark (not a test): the same mpit_overhead binary on a
# baseline library (BASE_LIB, e.g. an install of the commit before MPI_T)
# and on this build, without MPI_T and with a pvar session reading every
# counter; rounds alternate the configurations. Usage:
#   tests/perf/mpit_overhead.sh BASE_LIB_DIR [ROUNDS]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE_LIB=$1
ROUNDS=${2:-5}
OUT=$(mktemp -d)
"$ROOT/install/bin/mpicc" -O2 -o "$OUT/mpit_overhead" "$ROOT/tests/perf/mpit_overhead.c"
for round in $(seq "$ROUNDS"); do
  for cfg in base new new_s1 new_s2; do
    case $cfg in
      base)   out=$(LD_LIBRARY_PATH=$BASE_LIB timeout 300 "$ROOT/install/bin/mpiexec" -n 2 "$OUT/mpit_overhead" 0) ;;
      new)    out=$(timeout 300 "$ROOT/install/bin/mpiexec" -n 2 "$OUT/mpit_overhead" 0) ;;
      new_s1) out=$(timeout 300 "$ROOT/install/bin/mpiexec" -n 2 "$OUT/mpit_overhead" 1) ;;
      new_s2) out=$(timeout 300 "$ROOT/install/bin/mpiexec" -n 2 "$OUT/mpit_overhead" 2) ;;
    esac
    echo "$out" | sed "s/^/$round $cfg /"
  done
done | tee "$OUT/raw.txt"
python3 - "$OUT/raw.txt" <<'PY'
import collections, statistics, sys
best = collections.defaultdict(list)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 5:
        best[(p[1], p[2])].append(float(p[3]))
cfgs = ["base", "new", "new_s1", "new_s2"]
print("| metric (us) | " + " | ".join(cfgs) + " |")
print("|---|" + "---|" * len(cfgs))
for m in ["lat0", "lat1", "lat8", "lat64", "allreduce8"]:
    cells = [f"{statistics.median(best[(c, m)]):.4f} ({min(best[(c, m)]):.4f}-{max(best[(c, m)]):.4f})"
             for c in cfgs]
    print(f"| {m} | " + " | ".join(cells) + " |")
PY
rm -rf "$OUT"
