#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Swift API's documentation: DocC archives of the three products, from their catalogs
# (Sources/QTEventBus/QTEventBus.docc, Sources/QTEventBusFoundation/QTEventBusFoundation.docc,
# Sources/QTEventBusNATS/QTEventBusNATS.docc)
# and the public symbols SwiftPM dumps, with the toolchain's own `docc` (no plugin in
# Package.swift).  Fails on any DocC warning (an ambiguous or broken link, an
# undocumented parameter).
#
#   scripts/docs.sh                 build/docs/QTEventBus.doccarchive, QTEventBusFoundation.doccarchive,
#                                   QTEventBusNATS.doccarchive
#   scripts/docs.sh --static DIR    also static HTML in DIR/<module>/ (for a web server)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

static=
if [ "${1:-}" = --static ]; then static=${2:?usage: scripts/docs.sh [--static DIR]}; fi
command -v docc >/dev/null 2>&1 || die "docc not found: it comes with the Swift toolchain"
out=$ROOT/build/docs
rm -rf "$out"
mkdir -p "$out"

swift package dump-symbol-graph --minimum-access-level public >/dev/null
graphs=$(swift build --show-bin-path)/../symbolgraph
[ -d "$graphs" ] || graphs=$ROOT/.build/$(uname -m)-unknown-linux-gnu/symbolgraph
[ -d "$graphs" ] || die "no symbol graphs in $graphs"

warned=0
for module in QTEventBus QTEventBusFoundation QTEventBusNATS; do
  dir=$out/graphs-$module
  mkdir -p "$dir"
  cp "$graphs/$module.symbols.json" "$graphs"/"$module"@*.symbols.json "$dir/" 2>/dev/null || true
  args=(convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$dir"
        --fallback-display-name "$module" --fallback-bundle-identifier "org.qtbus.$module"
        --output-path "$out/$module.doccarchive")
  if [ -n "$static" ]; then
    args+=(--transform-for-static-hosting --hosting-base-path "$module")
  fi
  log "docc: $module"
  docc "${args[@]}" >"$out/$module.log" 2>&1 || { cat "$out/$module.log"; die "docc failed for $module"; }
  if grep -q "warning:" "$out/$module.log"; then
    grep -A6 "warning:" "$out/$module.log" >&2
    warned=1
  fi
  if [ -n "$static" ]; then
    mkdir -p "$static"
    rm -rf "${static:?}/$module"
    cp -r "$out/$module.doccarchive" "$static/$module"
  fi
done
[ "$warned" = 0 ] || die "DocC warned (above)"
log "docs: $(ls -d "$out"/*.doccarchive | tr '\n' ' ')"
