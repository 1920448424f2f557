#!/usr/bin/env bash
# The out-of-memory sweep (issue 11, part 2): runs Tests/OOM/workload.c (every call of
# qtbus.h, statuses checked against the header) once per allocation, failing exactly that
# one (Tests/OOM/failmalloc.c, LD_PRELOAD), and prints per call what the runs whose
# failed allocation happened in it ended with: clean (every status documented), wrong
# status, crash (a signal), trap (SIGILL/SIGTRAP from a Swift precondition), hang.
#
#   scripts/oom-sweep.sh [MAX_RUNS]      (default: every allocation of the workload)
#
# Builds and installs the library as scripts/test.sh does (build/, _install/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

build_install "$ROOT/build" "$ROOT/_install" -DCMAKE_BUILD_TYPE=Release
out=$ROOT/build/oom
mkdir -p "$out"
export PKG_CONFIG_PATH=$ROOT/_install/lib/pkgconfig
# shellcheck disable=SC2046
cc -std=c11 -O1 -g Tests/OOM/workload.c -o "$out/workload" $(pkg-config --cflags --libs qtbus)
cc -std=gnu11 -O1 -g -shared -fPIC Tests/OOM/failmalloc.c -o "$out/failmalloc.so" -ldl

# The allocations the workload makes once armed.
QTBUS_FAIL_COUNT=$out/count LD_PRELOAD=$out/failmalloc.so "$out/workload" \
  || die "the workload fails without any injected failure"
total=$(cat "$out/count")
max=${1:-$total}
[ "$max" -le "$total" ] || max=$total
log "sweep: failing each of allocations 1..$max of $total"

results=$out/results.tsv
: > "$results"
for n in $(seq 1 "$max"); do
  rm -f "$out/report"
  set +e
  # The group's own stderr too: bash reports a child killed by a signal there.
  { QTBUS_FAIL_ALLOC=$n QTBUS_FAIL_REPORT=$out/report LD_PRELOAD=$out/failmalloc.so \
      timeout 20 "$out/workload" >/dev/null 2>&1; } 2>/dev/null
  status=$?
  set -e
  where=$(cut -d' ' -f2- "$out/report" 2>/dev/null || echo "(not reached)")
  case $status in
    0) outcome=clean ;;
    3) outcome="wrong status" ;;
    124) outcome=hang ;;
    132|133) outcome=trap ;;
    *) outcome="crash ($status)" ;;
  esac
  printf '%s\t%s\t%s\n' "$n" "$where" "$outcome" >> "$results"
done

python3 - "$results" <<'PY'
import collections, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
table = collections.OrderedDict()
for n, where, outcome in rows:
    table.setdefault(where, collections.Counter())[outcome.split(" (")[0]] += 1
kinds = ["clean", "wrong status", "crash", "trap", "hang"]
print("| call in progress | runs | " + " | ".join(kinds) + " |")
print("|---|---:|" + "---:|" * len(kinds))
for where, c in table.items():
    print(f"| {where} | {sum(c.values())} | " + " | ".join(str(c.get(k, 0)) for k in kinds) + " |")
total = collections.Counter(o.split(" (")[0] for _, _, o in rows)
print(f"| **all** | {len(rows)} | " + " | ".join(str(total.get(k, 0)) for k in kinds) + " |")
PY
