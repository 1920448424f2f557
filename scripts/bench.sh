#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The benchmark command: qtbus against GLib's GSignal, libsigc++ 3, Boost.Signals2 and
# two hand-written limits (C, Benchmarks/C/), then qtbus's Swift API against NotificationCenter
# and OpenCombine (Swift, Benchmarks/Swift/), each measured side by side in one run on this
# machine.
#
#   scripts/bench.sh            full run (about 4 minutes; run it on an otherwise idle
#                               machine): prints the tables, writes docs/bench/bench-c.json,
#                               docs/bench/bench-c.md, docs/bench/bench-c.png, docs/bench/bench-instructions.md
#                               (scripts/bench-instructions.sh: callgrind), then docs/bench/bench-swift.json,
#                               docs/bench/bench-swift.md and docs/bench/bench-swift.png (each set only
#                               when its benchmark succeeded)
#   scripts/bench.sh --smoke    every case of both with tiny counts (seconds, plus the
#                               builds), every handler count checked, the JSON/Markdown/PNG
#                               made in a temporary directory; writes nothing to docs/
#   scripts/bench.sh --only c|swift|nats   one of the benchmarks (with or without --smoke);
#                               nats: bench-nats (Benchmarks/NATS/, about 1 minute), one
#                               process to another through a nats-server it starts, raw
#                               nats.c beside the qtbus bridge; writes docs/bench/bench-nats.json
#                               and .md
#   scripts/bench.sh [--smoke] -- ARGS   passes ARGS to bench-c (e.g. --reps 11 --rep-ms 200);
#                               BENCH_SWIFT_ARGS="..." does the same for swift-bench
#
# Steps: installs the peers and the plotting tool from Debian packages if missing
# (libglib2.0-dev libsigc++-3.0-dev libboost-dev python3-matplotlib; apt-get update
# once, only then), builds and installs libqtbus into _install/ as scripts/quickstart.sh
# does, builds Benchmarks/C/ into build/bench/ against the installed library via pkg-config,
# builds Benchmarks/Swift/ (its own package: the root package by path, OpenCombine from the
# package mirror) with `swift build -c release` into Benchmarks/Swift/.build/, then runs
# bench-c and swift-bench.  See Benchmarks/C/main.c and Benchmarks/Swift/Sources/swift-bench/Bench.swift
# for the method, docs/bench/bench-c.md and docs/bench/bench-swift.md for the latest results.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

usage="usage: scripts/bench.sh [--smoke] [--only c|swift|nats] [-- bench-c args]"
smoke=0
run_c=1
run_swift=1
run_nats=1
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --only)
      [ $# -ge 2 ] || die "$usage"
      case $2 in
        c) run_swift=0; run_nats=0 ;;
        swift) run_c=0; run_nats=0 ;;
        nats) run_c=0; run_swift=0 ;;
        *) die "$usage" ;;
      esac
      shift ;;
    --) shift; extra=("$@"); break ;;
    *) die "$usage" ;;
  esac
  shift
done
read -r -a swift_extra <<<"${BENCH_SWIFT_ARGS:-}"

PREFIX=$ROOT/_install
OUT=$ROOT/build/bench
DOCS=$ROOT/docs/bench
PYTHON=${BENCH_PYTHON:-/usr/bin/python3}  # Debian's python3, where python3-matplotlib lives
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

log "benchmark dependencies"
apt_install bench libglib2.0-dev libsigc++-3.0-dev libboost-dev python3-matplotlib
[ "$run_c" -eq 1 ] && bash "$ROOT/scripts/deps.sh"
echo "bench: ok (GLib $(pkg-config --modversion glib-2.0), libsigc++ $(pkg-config --modversion sigc++-3.0)," \
  "Boost $(dpkg-query -W -f '${Version}' libboost-dev), matplotlib $("$PYTHON" -c 'import matplotlib; print(matplotlib.__version__)'))"

rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
# Both benchmarks build before either runs: a build that fails stops the run early, and
# no compiler competes with a measurement.
if [ "$run_c" -eq 1 ]; then
  log "build and install libqtbus into _install/"
  build_install "$ROOT/build" "$PREFIX" -DCMAKE_BUILD_TYPE=Release

  log "build Benchmarks/C/ into build/bench/ (pkg-config qtbus)"
  swift_lib=$(cd "$(swift_bin_dir)/../lib/swift/linux" && pwd)
  make -C "$ROOT/Benchmarks/C" --no-print-directory -j2 OUT="$OUT" SWIFT_LIB="$swift_lib"

  lib=$(readlink -f "$PREFIX/lib/libqtbus.so")
  lib_sum=$(sha256sum "$lib" | cut -c1-16)
  # What libqtbus.so is built from (CMakeLists.txt's sources); the Swift API's work does not count.
  engine=(Sources/QTBusEngine Sources/CQtbusShims include CMakeLists.txt cmake)
  c_rev=$rev
  if [ -n "$(git -C "$ROOT" status --porcelain -- "${engine[@]}" 2>/dev/null)" ]; then
    c_rev="$rev + uncommitted engine changes"
  fi
  c_meta=(--meta "swiftc=$(swiftc --version 2>/dev/null | head -1)"
          --meta "qtbus revision=$c_rev" --meta "libqtbus sha256=$lib_sum")
fi

if [ "$run_nats" -eq 1 ]; then
  log "build libqtbus-nats and Benchmarks/NATS/ into build/bench-nats/ (pkg-config qtbus-nats)"
  bash "$ROOT/scripts/deps.sh"   # libnats-dev, nats-server
  build_install "$ROOT/build" "$PREFIX" -DCMAKE_BUILD_TYPE=Release -DQTBUS_NATS=ON
  make -C "$ROOT/Benchmarks/NATS" --no-print-directory -j2 OUT="$ROOT/build/bench-nats"

  nats_lib=$(readlink -f "$PREFIX/lib/libqtbus-nats.so")
  nats_sum=$(sha256sum "$nats_lib" | cut -c1-16)
  # What the bridge is built from, besides the engine.
  nats_rev=$rev
  if [ -n "$(git -C "$ROOT" status --porcelain -- nats include Sources/QTBusEngine Sources/CQtbusShims 2>/dev/null)" ]; then
    nats_rev="$rev + uncommitted changes to nats/, include/ or the engine"
  fi
  nats_meta=(--meta "qtbus revision=$nats_rev" --meta "libqtbus-nats sha256=$nats_sum")
fi

if [ "$run_swift" -eq 1 ]; then
  # Release, as Swift users ship; its own scratch folder, Benchmarks/Swift/.build/.
  log "build Benchmarks/Swift/ (swift build -c release --package-path Benchmarks/Swift)"
  swift build -c release --package-path "$ROOT/Benchmarks/Swift"
  swift_bench=$(swift build -c release --package-path "$ROOT/Benchmarks/Swift" --show-bin-path)/swift-bench
  [ -x "$swift_bench" ] || die "no swift-bench at $swift_bench"
  swift_sum=$(sha256sum "$swift_bench" | cut -c1-16)
  # What swift-bench is built from: the whole Swift tree (engine and Swift API) of the root package.
  swift_sources=(Sources include Package.swift Benchmarks/Swift)
  swift_rev=$rev
  if [ -n "$(git -C "$ROOT" status --porcelain -- "${swift_sources[@]}" 2>/dev/null)" ]; then
    swift_rev="$rev + uncommitted changes to Sources/ or Benchmarks/Swift/"
  fi
  swift_version=$(swift --version 2>/dev/null | head -1)
  opencombine=$("$PYTHON" -c 'import json, sys
pins = json.load(open(sys.argv[1]))["pins"]
print(next((p["state"].get("version") or p["state"].get("revision", "?")[:12]
            for p in pins if p["identity"] == "opencombine"), "?"))' "$ROOT/Benchmarks/Swift/Package.resolved")
  swift_meta=(--meta "swift=$swift_version" --meta "qtbus revision=$swift_rev"
              --meta "swift-bench sha256=$swift_sum"
              --lib-version "opencombine=$opencombine"
              --lib-version "nc=Foundation of Swift $(awk '{print $3}' <<<"$swift_version")")
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ "$smoke" -eq 1 ] && what="--smoke (tiny counts; handler counts checked; nothing written to docs/)" ||
  what="(7 interleaved repetitions of >= 100 ms per library and case)"

if [ "$run_c" -eq 1 ]; then
  log "run bench-c $what"
  args=(--json "$work/bench-c.json" --md "$work/bench-c.md" "${c_meta[@]}")
  [ "$smoke" -eq 1 ] && args=(--smoke "${args[@]}")
  env -u LD_LIBRARY_PATH "$OUT/bench-c" "${args[@]}" "${extra[@]}"
  "$PYTHON" "$ROOT/Benchmarks/plot.py" "$work/bench-c.json" "$work/bench-c.png"

  if [ "$(sha256sum "$lib" | cut -c1-16)" != "$lib_sum" ]; then
    die "libqtbus.so was rebuilt during the run: results discarded, run scripts/bench.sh again"
  fi
  if [ "$smoke" -eq 1 ]; then
    # Every case ran (unless ARGS chose some).
    [ ${#extra[@]} -gt 0 ] ||
      "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["cases"]) >= 10' \
        "$work/bench-c.json"
    echo "bench: C smoke run passed (JSON, Markdown and PNG made and discarded)"
  else
    mkdir -p "$DOCS"
    cp "$work/bench-c.json" "$work/bench-c.md" "$work/bench-c.png" "$DOCS/"
    echo "wrote docs/bench/bench-c.json, docs/bench/bench-c.md, docs/bench/bench-c.png"
  fi

  # The same dispatch path counted in instructions (callgrind), which the machine's load
  # does not move: docs/bench/bench-instructions.md.
  log "run bench-instructions (callgrind)"
  if [ "$smoke" -eq 1 ]; then
    bash "$ROOT/scripts/bench-instructions.sh" --smoke --prefix "$PREFIX" --build "$ROOT/build/bench-instructions"
  else
    bash "$ROOT/scripts/bench-instructions.sh" --prefix "$PREFIX" --build "$ROOT/build/bench-instructions" \
      --out "$work/bench-instructions.md"
    cp "$work/bench-instructions.md" "$DOCS/"
    echo "wrote docs/bench/bench-instructions.md"
  fi
fi

if [ "$run_swift" -eq 1 ]; then
  log "run swift-bench $what"
  args=(--json "$work/bench-swift.json" --md "$work/bench-swift.md" "${swift_meta[@]}")
  [ "$smoke" -eq 1 ] && args=(--smoke "${args[@]}")
  "$swift_bench" "${args[@]}" "${swift_extra[@]}"
  "$PYTHON" "$ROOT/Benchmarks/plot.py" "$work/bench-swift.json" "$work/bench-swift.png"

  if [ "$(sha256sum "$swift_bench" | cut -c1-16)" != "$swift_sum" ]; then
    die "swift-bench was rebuilt during the run: results discarded, run scripts/bench.sh again"
  fi
  if [ "$smoke" -eq 1 ]; then
    [ ${#swift_extra[@]} -gt 0 ] ||
      "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["cases"]) >= 9' \
        "$work/bench-swift.json"
    echo "bench: Swift smoke run passed (JSON, Markdown and PNG made and discarded)"
  else
    mkdir -p "$DOCS"
    cp "$work/bench-swift.json" "$work/bench-swift.md" "$work/bench-swift.png" "$DOCS/"
    echo "wrote docs/bench/bench-swift.json, docs/bench/bench-swift.md, docs/bench/bench-swift.png"
  fi
fi
if [ "$run_nats" -eq 1 ]; then
  log "run bench-nats"
  args=(--json "$work/bench-nats.json" --md "$work/bench-nats.md" "${nats_meta[@]}")
  [ "$smoke" -eq 1 ] && args=(--smoke "${args[@]}")
  env -u LD_LIBRARY_PATH "$ROOT/build/bench-nats/bench-nats" "${args[@]}"
  if [ "$(sha256sum "$nats_lib" | cut -c1-16)" != "$nats_sum" ]; then
    die "libqtbus-nats.so was rebuilt during the run: results discarded, run scripts/bench.sh again"
  fi
  if [ "$smoke" -eq 1 ]; then
    # Both sizes, four pairs each (bench-nats itself fails on a lost or reordered event).
    "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["rows"]) == 8' "$work/bench-nats.json"
    echo "bench: NATS smoke run passed (JSON and Markdown made and discarded)"
  else
    mkdir -p "$DOCS"
    cp "$work/bench-nats.json" "$work/bench-nats.md" "$DOCS/"
    echo "wrote docs/bench/bench-nats.json, docs/bench/bench-nats.md"
  fi
fi
log "done"
