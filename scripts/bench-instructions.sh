#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions per operation, counted by callgrind: qtbus's dispatch path beside the two
# hand-written limits of Benchmarks/C/ (the fn-ptr array and the mutex + refcounted
# snapshot, built as a shared library as libqtbus is one).  Unlike time, the counts do
# not move with the machine's load: the figure to compare before and after a change.
#
#   scripts/bench-instructions.sh [--smoke] [--prefix DIR] [--out FILE] [--build DIR]
#
#   --prefix DIR   count the libqtbus installed in DIR (its lib/pkgconfig); without it,
#                  libqtbus is built and installed into _install/ as scripts/bench.sh does
#   --out FILE     the Markdown table (default docs/bench/bench-instructions.md; --smoke: none)
#   --build DIR    where the workload is built (default build/bench-instructions)
#   --smoke        tiny counts, every row run and checked, nothing written
#
# Method: the workload (Benchmarks/C/callgrind/count.c: bench-c's own adapters and
# handlers) runs each operation N and 2N times after a warm-up round; callgrind counts
# only the measured call (--toggle-collect), and each figure is the difference of the two
# counts over N, so set-up and what the measured call does once cancel.  "each further
# handler" is (100 handlers - 10 handlers) / 90; the 1-handler row, beside the 0-handler
# one, is what a first handler costs.  scripts/bench.sh runs this and writes
# docs/bench/bench-instructions.md, whose Targets table is what the dispatch path is
# held to.  The Headers table: the same dispatch by name with 1 and 8 headers, 10 handlers.
# The Queued table (Benchmarks/C/callgrind/count_queue.c): bench-c's burst rows, every
# thread counted, the whole program at N and 2N items, so start-up cancels.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage="usage: scripts/bench-instructions.sh [--smoke] [--prefix DIR] [--out FILE] [--build DIR]"
smoke=0
prefix=
out=
build=$ROOT/build/bench-instructions
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --prefix) [ $# -ge 2 ] || die "$usage"; prefix=$2; shift ;;
    --out) [ $# -ge 2 ] || die "$usage"; out=$2; shift ;;
    --build) [ $# -ge 2 ] || die "$usage"; build=$2; shift ;;
    *) die "$usage" ;;
  esac
  shift
done
command -v valgrind >/dev/null || die "valgrind is needed (scripts/deps.sh installs it)"
if [ -z "$prefix" ]; then
  prefix=$ROOT/_install
  log "build and install libqtbus into _install/"
  build_install "$ROOT/build" "$prefix" -DCMAKE_BUILD_TYPE=Release
fi
prefix=$(cd "$prefix" && pwd)
build=$(realpath -m "$build")   # make -C runs in Benchmarks/C/callgrind/
[ "$smoke" -eq 1 ] || out=${out:-$ROOT/docs/bench/bench-instructions.md}

log "build Benchmarks/C/callgrind/ into $build (pkg-config qtbus from $prefix)"
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C "$ROOT/Benchmarks/C/callgrind" --no-print-directory OUT="$build"

if [ "$smoke" -eq 1 ]; then n=50; else n=10000; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# count LIB CASE HANDLERS ITERS: the instructions of the measured call.
count() {
  local file=$work/callgrind.out
  env -u LD_LIBRARY_PATH valgrind --tool=callgrind --toggle-collect=measured --callgrind-out-file="$file" \
    "$build/count" "$@" >"$work/log" 2>&1 || { cat "$work/log" >&2; die "count $* failed"; }
  awk '/^summary:/ { print $2 }' "$file"
}
# per LIB CASE HANDLERS: instructions per operation, (count(2N) - count(N)) / N.
results=$work/results
: >"$results"
per() {
  local a b
  a=$(count "$@" "$n")
  b=$(count "$@" $((2 * n)))
  echo "$1 $2 $3 $a $b" >>"$results"
  printf '  %-9s %-10s %3s handlers: %s\n' "$1" "$2" "$3" \
    "$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')"
}

log "callgrind, $n and $((2 * n)) operations per figure"
for lib in qtbus qtbus_id fnptr mutex; do
  for h in 0 1 10 100; do per "$lib" dispatch "$h"; done
  [ "$lib" = qtbus_id ] || per "$lib" subdispose 100
done
for lib in qtbus_h1 qtbus_h8; do per "$lib" dispatch 10; done
# perq IMPL: instructions per queued item, producer and consumer, (count(2N) - count(N)) / N.
perq() {
  local file=$work/callgrind.out a b k
  for k in "$n" $((2 * n)); do
    env -u LD_LIBRARY_PATH valgrind --tool=callgrind --callgrind-out-file="$file" \
      "$build/count-queue" "$1" "$k" >"$work/log" 2>&1 || { cat "$work/log" >&2; die "count-queue $1 failed"; }
    b=$(awk '/^summary:/ { print $2 }' "$file")
    [ "$k" = "$n" ] && a=$b
  done
  echo "$1 queued 1 $a $b" >>"$results"
  printf '  %-13s queued: %s\n' "$1" "$(awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')"
}
for impl in qtbus qtbus_bounded libdispatch; do perq "$impl"; done

lib_sum=$(sha256sum "$(readlink -f "$prefix/lib/libqtbus.so")" | cut -c1-16)
rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
engine=(Sources/QTBusEngine Sources/CQtbusShims include CMakeLists.txt cmake)
if [ -n "$(git -C "$ROOT" status --porcelain -- "${engine[@]}" 2>/dev/null)" ]; then
  rev="$rev + uncommitted engine changes"
fi
python3 - "$results" "$n" "${out:-$work/bench-instructions.md}" "$rev" "$lib_sum" \
  "$(valgrind --version)" "$(cc --version | head -1)" <<'PY'
import sys, datetime
results, n, out, rev, lib_sum, vg, cc = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
per = {}
for line in open(results):
    lib, case, h, a, b = line.split()
    per[(lib, case, int(h))] = (int(b) - int(a)) / n
def f(x):
    return "" if x is None else f"{x:,.0f}" if abs(x) >= 100 else f"{x:.1f}"
libs = ["qtbus", "qtbus_id", "fnptr", "mutex"]
def get(lib, case, h): return per.get((lib, case, h))
def further(lib):
    a, b = get(lib, "dispatch", 10), get(lib, "dispatch", 100)
    return None if a is None or b is None else (b - a) / 90
rows = [
    ("dispatch, 0 handlers", {l: get(l, "dispatch", 0) for l in libs}),
    ("dispatch, 1 handler", {l: get(l, "dispatch", 1) for l in libs}),
    ("dispatch, 10 handlers", {l: get(l, "dispatch", 10) for l in libs}),
    ("dispatch, 100 handlers", {l: get(l, "dispatch", 100) for l in libs}),
    ("each further handler, (100 - 10) / 90", {l: further(l) for l in libs}),
    ("subscribe + dispose, 100 present", {l: get(l, "subdispose", 100) for l in libs}),
]
lines = []
w = lines.append
w("# qtbus: instructions per operation (callgrind)")
w("")
w("Instructions are what a change to the dispatch path is measured in: unlike time, they do not move with "
  "the machine's load. Reproduce with `scripts/bench-instructions.sh` (part of `scripts/bench.sh`, which "
  "rewrites this file); method and workload: `Benchmarks/C/callgrind/`.")
w("")
w(f"Generated by `scripts/bench-instructions.sh` on {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ')}. "
  f"qtbus revision: {rev}; libqtbus sha256: {lib_sum}. {vg}, {cc}, `-O2`.")
w("")
w(f"Each figure: callgrind's count of the measured call for {2 * n:,} operations less its count for {n:,}, over "
  f"{n:,} (after a warm-up round of 1,000), so set-up cancels. The adapters are bench-c's (`lib_qtbus.c`, "
  "`lib_baselines.c`), each handler increments a counter; the two limits are built into a shared library, "
  "as libqtbus is one. qtbus: `qtbus_dispatch` on an isolated bus, the type given as a string; qtbus id: "
  "`qtbus_dispatch_id` (`qtbus_type_lookup` once). Subscribe + dispose is the same calls for both qtbus columns.")
w("")
w("| per operation (instructions) | qtbus | qtbus id | fn-ptr array (unsafe limit) | mutex + refcounted snapshot (safe limit) |")
w("|---|---:|---:|---:|---:|")
for name, v in rows:
    w(f"| {name} | {f(v['qtbus'])} | {f(v['qtbus_id']) if 'subscribe' not in name else ''} | {f(v['fnptr'])} | {f(v['mutex'])} |")
w("")
q0, qi0 = get("qtbus", "dispatch", 0), get("qtbus_id", "dispatch", 0)
q1 = get("qtbus", "dispatch", 1)
q10, fn10 = get("qtbus", "dispatch", 10), get("fnptr", "dispatch", 10)
qf, ff = further("qtbus"), further("fnptr")
sd, msd = get("qtbus", "subdispose", 100), get("mutex", "subdispose", 100)
targets = [
    ("dispatch by name, 0 handlers", "<= 150", q0, q0 <= 150),
    ("dispatch by type id, 0 handlers", "<= 60", qi0, qi0 <= 60),
    ("dispatch by name, 1 handler", "<= 230", q1, q1 <= 230),
    ("each further handler", f"<= 1.5x the fn-ptr array's ({f(1.5 * ff)})", qf, qf <= 1.5 * ff),
    ("dispatch, 10 handlers", f"<= 2x the fn-ptr array's ({f(2 * fn10)})", q10, q10 <= 2 * fn10),
    ("subscribe + dispose, 100 present", f"<= 1.3x the safe limit's ({f(1.3 * msd)})", sd, sd <= 1.3 * msd),
]
h10 = {k: get(k, "dispatch", 10) for k in ("qtbus", "qtbus_h1", "qtbus_h8")}
w("## Headers")
w("")
w("`qtbus_dispatch` by name to 10 handlers, the same bus, with `QTBUS_EVENT_HEADERS`: W3C's `traceparent` "
  "alone, or with `tracestate`, `baggage` and five short `x-` headers (Benchmarks/C/lib_qtbus.c). The "
  "library checks and copies them once per dispatch, whatever the number of handlers.")
w("")
w("| dispatch by name, 10 handlers (instructions) | no headers | 1 header | 8 headers |")
w("|---|---:|---:|---:|")
w(f"| per dispatch | {f(h10['qtbus'])} | {f(h10['qtbus_h1'])} | {f(h10['qtbus_h8'])} |")
w(f"| more than without | | {f(h10['qtbus_h1'] - h10['qtbus'])} | {f(h10['qtbus_h8'] - h10['qtbus'])} |")
w("")
qd = get("libdispatch", "queued", 1)
w("## Queued delivery")
w("")
w("bench-c's burst rows: one subscription on a created queue, the items posted behind a gate "
  "(bounded: `QTBUS_OVERFLOW_BLOCK`, 1,024 slots, never full, in chunks of 1,023), beside bare "
  "`dispatch_async_f` to a serial queue (Benchmarks/C/callgrind/count_queue.c). Producer and consumer "
  "together: every thread is counted.")
w("")
w("| per queued item (instructions) | qtbus | qtbus, bounded | bare libdispatch |")
w("|---|---:|---:|---:|")
w(f"| per item | {f(get('qtbus', 'queued', 1))} | {f(get('qtbus_bounded', 'queued', 1))} | {f(qd)} |")
w(f"| times bare libdispatch | {get('qtbus', 'queued', 1) / qd:.2f}x | {get('qtbus_bounded', 'queued', 1) / qd:.2f}x | 1.00x |")
w("")
w("## Targets")
w("")
w("| figure | target | qtbus | met |")
w("|---|---|---:|---|")
for name, t, v, ok in targets:
    w(f"| {name} | {t} | {f(v)} | {'met' if ok else 'NOT met'} |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
[ "$smoke" -eq 1 ] && echo "bench-instructions: smoke run passed (nothing written)" || echo "wrote $out"
