#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The out-of-memory sweep (docs/operations.md, "Reliability"): runs Tests/OOM/workload.c
# (every call of qtbus.h, statuses checked against the header, then every call again
# with memory back, and release hooks counted) once per allocation, failing exactly
# that one (Tests/OOM/failmalloc.c, LD_PRELOAD), and prints per call what the runs whose
# failed allocation happened in it ended with: clean (every status documented, the process
# went on working), wrong (an undocumented status or a wrong release count), crash (a
# signal), trap (SIGILL/SIGTRAP from a Swift precondition), hang.
#
# Two sweeps, and every run of both must be clean (qtbus.h, "Out of memory": no run dies,
# every failure is QTBUS_ENOMEM/NULL or absorbed): "warm" fails the allocations a program
# makes once it has used every call before (the steady state); "cold" fails those of a
# process's first calls, where the library's one-time state is made (the shared bus,
# the main queue, a thread's record, libdispatch's first queues and threads).
#
#   scripts/oom-sweep.sh [warm|cold|both]      (default both; fails if a sweep is not clean)
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

sweep() {  # MODE (warm|cold): prints the table, returns 1 unless every run was clean
  local mode=$1 flag=
  [ "$mode" = warm ] && flag=--warm
  # The allocations the workload makes once armed.
  QTBUS_FAIL_COUNT=$out/count LD_PRELOAD=$out/failmalloc.so "$out/workload" $flag \
    || die "the workload fails without any injected failure"
  local total n status where outcome
  total=$(cat "$out/count")
  log "$mode sweep: failing each of allocations 1..$total"
  rm -f "$out"/report.*
  local results=$out/results-$mode.tsv
  : > "$results"
  for n in $(seq 1 "$total"); do
    set +e
    # The group's own stderr too: bash reports a child killed by a signal there.
    { QTBUS_FAIL_ALLOC=$n QTBUS_FAIL_REPORT=$out/report.$n LD_PRELOAD=$out/failmalloc.so \
        timeout 20 "$out/workload" $flag >/dev/null 2>&1; } 2>/dev/null
    status=$?
    set -e
    where=$(head -1 "$out/report.$n" 2>/dev/null | cut -d' ' -f2- || true)
    [ -n "$where" ] || where="(not reached)"
    case $status in
      0) outcome=clean ;;
      3) outcome=wrong ;;
      124) outcome=hang ;;
      132|133) outcome=trap ;;
      *) outcome="crash ($status)" ;;
    esac
    printf '%s\t%s\t%s\n' "$n" "$where" "$outcome" >> "$results"
  done
  python3 - "$results" "$mode" <<'PY'
import collections, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
table = collections.OrderedDict()
for n, where, outcome in rows:
    table.setdefault(where, collections.Counter())[outcome.split(" (")[0]] += 1
kinds = ["clean", "wrong", "crash", "trap", "hang"]
print(f"\n{sys.argv[2]}: the call in progress when the allocation failed\n")
print("| call | runs | " + " | ".join(kinds) + " |")
print("|---|---:|" + "---:|" * len(kinds))
for where, c in table.items():
    print(f"| {where} | {sum(c.values())} | " + " | ".join(str(c.get(k, 0)) for k in kinds) + " |")
total = collections.Counter(o.split(" (")[0] for _, _, o in rows)
print(f"| **all** | {len(rows)} | " + " | ".join(str(total.get(k, 0)) for k in kinds) + " |")
sys.exit(0 if total.get("clean", 0) == len(rows) else 1)
PY
}

mode=${1:-both}
unclean=()
case $mode in
  warm|cold) sweep "$mode" || unclean+=("$mode") ;;
  both) sweep cold || unclean+=(cold); sweep warm || unclean+=(warm) ;;
  *) die "usage: scripts/oom-sweep.sh [warm|cold|both]" ;;
esac
for mode in ${unclean[@]+"${unclean[@]}"}; do printf 'error: the %s sweep has runs that were not clean\n' "$mode" >&2; done
[ ${#unclean[@]} -eq 0 ]
