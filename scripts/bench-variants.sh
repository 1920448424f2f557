#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two builds of libqtbus side by side: the default (the engine in Embedded Swift, no
# Swift runtime: QTBUS_SWIFT_RUNTIME=embedded) and the full-runtime one that 0.2.0
# shipped (the Swift runtime and libdispatch linked in: QTBUS_SWIFT_RUNTIME=static).
#
#   scripts/bench-variants.sh [--reps N]
#
# Builds and installs both (build/ -> _install/, build/full/ -> build/full-install/, as
# scripts/test.sh does), builds Benchmarks/C/ against each through pkg-config
# (build/bench-embedded/, build/bench-static/),
# then prints for each: the library's size (as installed and stripped), its NEEDED
# entries, the instructions one dispatch to 0 / 1 / 10 handlers costs (callgrind,
# Benchmarks/C/dispatch_loop.c at two event counts, the difference), the peak RSS of that small
# program, and bench-c's dispatch, queue and start-up cases (median wall time; the two
# variants' runs alternate, so machine noise hits both), with GLib's start-up from the
# same runs beside them.  Needs the peers of
# scripts/bench.sh (run it once, or scripts/bench.sh --smoke) and valgrind.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

reps=5
[ "${1:-}" = --reps ] && reps=${2:?--reps N}

log "build both variants"
build_install "$ROOT/build" "$ROOT/_install" -DCMAKE_BUILD_TYPE=Release >/dev/null
build_install "$ROOT/build/full" "$ROOT/build/full-install" -DCMAKE_BUILD_TYPE=Release \
  -DQTBUS_SWIFT_RUNTIME=static >/dev/null
variants=(embedded static)
declare -A prefix=([embedded]=$ROOT/_install [static]=$ROOT/build/full-install)
swift_lib=$(cd "$(swift_bin_dir)/../lib/swift/linux" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for v in "${variants[@]}"; do
  pc=${prefix[$v]}/lib/pkgconfig
  PKG_CONFIG_PATH=$pc make -C "$ROOT/Benchmarks/C" --no-print-directory -j2 -s \
    OUT="$ROOT/build/bench-$v" SWIFT_LIB="$swift_lib"
  # shellcheck disable=SC2046 # pkg-config output is a list of words
  ${CC:-cc} -O2 -std=c11 "$ROOT/Benchmarks/C/dispatch_loop.c" $(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs qtbus) \
    -o "$work/loop-$v"
done

instructions() { # PROGRAM ARGS... -> total instructions executed
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*Collected : //p'
}

log "size, NEEDED, instructions per dispatch, peak RSS"
for v in "${variants[@]}"; do
  lib=$(readlink -f "${prefix[$v]}/lib/libqtbus.so")
  strip --strip-unneeded -o "$work/stripped.so" "$lib"
  needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  line="$v: $(stat -c %s "$lib") B ($(stat -c %s "$work/stripped.so") B stripped); NEEDED $needed"
  for h in 0 1 10; do
    a=$(instructions "$work/loop-$v" $h 1000)
    b=$(instructions "$work/loop-$v" $h 11000)
    line+="; $h handlers $(( (b - a) / 10000 )) instr"
  done
  rss=$( { /usr/bin/time -f %M "$work/loop-$v" 10 1000 >/dev/null; } 2>&1 )
  echo "$line; peak RSS $rss KB"
done

log "bench-c: dispatch, queue, start-up ($reps alternating runs of each variant)"
for ((i = 0; i < reps; i++)); do
  for v in "${variants[@]}"; do
    env -u LD_LIBRARY_PATH "$ROOT/build/bench-$v/bench-c" --case dispatch --case queue --case startup \
      --reps 3 --json "$work/$v-$i.json" >/dev/null
  done
done
python3 - "$work" "$reps" <<'PY'
import json, statistics, sys
work, reps = sys.argv[1], int(sys.argv[2])
A, B = "embedded", "static"
runs = {v: [json.load(open(f"{work}/{v}-{i}.json")) for i in range(reps)] for v in (A, B)}
print(f"{'qtbus, median of run medians':40} {A:>10} {B:>10} {A + '/' + B:>16}")
def median_of(v, case_id, lib):
    vals = [next(c for c in r["cases"] if c["id"] == case_id)["results"].get(lib, {}).get("median")
            for r in runs[v]]
    vals = [x for x in vals if x]
    return statistics.median(vals) if vals else None
for case in runs[A][0]["cases"]:
    if "qtbus" not in case["results"]:
        continue
    med = {v: median_of(v, case["id"], "qtbus") for v in runs}
    print(f"{case['title'] + ' (' + case['unit'] + ')':40} {med[A]:10.3g} {med[B]:10.3g} "
          f"{med[A] / med[B]:16.2f}")
# GLib's start-up, measured in the same runs: the figure CONTRACT section 13 compares with.
for case in runs[A][0]["cases"]:
    if case["id"].startswith("startup") and "glib" in case["results"]:
        glib = statistics.median(median_of(v, case["id"], "glib") for v in runs)
        ours = median_of(A, case["id"], "qtbus")
        print(f"{case['title'] + ', GLib (' + case['unit'] + ')':40} {glib:10.3g} {'':10} "
              f"{A + '/GLib ' + format(ours / glib, '.2f'):>16}")
# The queued rows depend on thread wake-ups, which move with the machine from run to run:
# each variant's figure over bare libdispatch measured in the same process and run.
print()
print(f"{'queued rows, median of qtbus/bare per run':40} {A:>10} {B:>10}")
for case in runs[A][0]["cases"]:
    if not case["id"].startswith("queued") or "bare" not in case["results"]:
        continue
    ratio = {v: statistics.median(
                 next(c for c in r["cases"] if c["id"] == case["id"])["results"]["qtbus"]["median"] /
                 next(c for c in r["cases"] if c["id"] == case["id"])["results"]["bare"]["median"]
                 for r in runs[v]) for v in runs}
    print(f"{case['title']:40} {ratio[A]:10.2f} {ratio[B]:10.2f}")
PY
