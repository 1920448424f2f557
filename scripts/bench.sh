#!/usr/bin/env bash
# The benchmark command: qtbus against GLib's GSignal, libsigc++ 3, Boost.Signals2 and
# two hand-written limits, measured side by side in one run on this machine.
#
#   scripts/bench.sh            full run (about 2 minutes; run it on an otherwise idle
#                               machine): prints the table, writes docs/bench-c.json,
#                               docs/bench-c.md and docs/bench-c.png
#   scripts/bench.sh --smoke    every case with tiny counts (seconds), every handler count
#                               checked, the JSON/Markdown/PNG made in a temporary
#                               directory; writes nothing to docs/
#   scripts/bench.sh [--smoke] -- ARGS   passes ARGS to bench-c (e.g. --reps 11 --rep-ms 200)
#
# Steps: installs the peers and the plotting tool from Debian packages if missing
# (libglib2.0-dev libsigc++-3.0-dev libboost-dev python3-matplotlib; apt-get update
# once, only then), builds and installs libqtbus into _install/ as scripts/quickstart.sh
# does, builds bench/ into build/bench/ against the installed library via pkg-config,
# runs it.  See bench/main.c for the method and docs/bench-c.md for the latest results.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

smoke=0
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --) shift; extra=("$@"); break ;;
    *) die "usage: scripts/bench.sh [--smoke] [-- bench-c args]" ;;
  esac
  shift
done

PREFIX=$ROOT/_install
OUT=$ROOT/build/bench
DOCS=$ROOT/docs
PYTHON=${BENCH_PYTHON:-/usr/bin/python3}  # Debian's python3, where python3-matplotlib lives
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

log "benchmark dependencies"
missing=()
for pkg in libglib2.0-dev libsigc++-3.0-dev libboost-dev python3-matplotlib; do
  dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "bench: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    die "need root (or passwordless sudo) to install: ${missing[*]}"
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -q </dev/null
  "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi
bash "$ROOT/scripts/deps.sh"
echo "bench: ok (GLib $(pkg-config --modversion glib-2.0), libsigc++ $(pkg-config --modversion sigc++-3.0)," \
  "Boost $(dpkg-query -W -f '${Version}' libboost-dev), matplotlib $("$PYTHON" -c 'import matplotlib; print(matplotlib.__version__)'))"

log "build and install libqtbus into _install/"
build_install "$ROOT/build" "$PREFIX" -DCMAKE_BUILD_TYPE=Release

log "build bench/ into build/bench/ (pkg-config qtbus)"
swift_lib=$(cd "$(swift_bin_dir)/../lib/swift/linux" && pwd)
make -C "$ROOT/bench" --no-print-directory -j2 OUT="$OUT" SWIFT_LIB="$swift_lib"

lib=$(readlink -f "$PREFIX/lib/libqtbus.so")
lib_sum=$(sha256sum "$lib" | cut -c1-16)
rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
# What libqtbus.so is built from (CMakeLists.txt's sources); the Swift API's work does not count.
engine=(Sources/QTBusEngine Sources/CQtbusShims include CMakeLists.txt cmake)
if [ -n "$(git -C "$ROOT" status --porcelain -- "${engine[@]}" 2>/dev/null)" ]; then
  rev="$rev + uncommitted engine changes"
fi
meta=(--meta "swiftc=$(swiftc --version 2>/dev/null | head -1)"
      --meta "qtbus revision=$rev" --meta "libqtbus sha256=$lib_sum")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$smoke" -eq 1 ]; then
  log "run bench-c --smoke (tiny counts; handler counts checked; nothing written to docs/)"
else
  log "run bench-c (7 interleaved repetitions of >= 100 ms per library and case)"
fi
args=(--json "$work/bench-c.json" --md "$work/bench-c.md" "${meta[@]}")
[ "$smoke" -eq 1 ] && args=(--smoke "${args[@]}")
env -u LD_LIBRARY_PATH "$OUT/bench-c" "${args[@]}" "${extra[@]}"
"$PYTHON" "$ROOT/bench/plot.py" "$work/bench-c.json" "$work/bench-c.png"

if [ "$(sha256sum "$lib" | cut -c1-16)" != "$lib_sum" ]; then
  die "libqtbus.so was rebuilt during the run: results discarded, run scripts/bench.sh again"
fi
if [ "$smoke" -eq 1 ]; then
  "$PYTHON" -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["cases"]) >= 10' \
    "$work/bench-c.json"
  echo "bench: smoke run passed (JSON, Markdown and PNG made and discarded)"
else
  mkdir -p "$DOCS"
  cp "$work/bench-c.json" "$work/bench-c.md" "$work/bench-c.png" "$DOCS/"
  log "done"
  echo "wrote docs/bench-c.json, docs/bench-c.md, docs/bench-c.png"
fi
