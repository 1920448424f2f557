#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a Swift client of this package can reach, checked against the modules `swift
# build` made (.build/debug/Modules):
#   1. the products are exactly QTEventBus, QTEventBusFoundation and QTEventBusNATS (the
#      only targets another package can depend on);
#   2. QTBusEngine declares nothing public (its symbol graph at public level is empty):
#      its entry points are `package`, for QTEventBus only;
#   3. a client file that imports QTBusEngine and calls an entry point does not
#      type-check as another package compiles it, and does with this package's name
#      (the control: the check can fail).
# CQtbusShims is a C target, which SwiftPM shows to every client of a product that
# depends on it (C has no access control); what it declares is qtbus.h's C API and the
# engine's glue, none of it Swift API (docs/swift.md).  So are CQtbusNATS (qtbus_nats.h)
# and CNATS (nats.c's header) to clients of QTEventBusNATS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

products=$(swift package dump-package | python3 -c 'import json,sys; print(" ".join(sorted(p["name"] for p in json.load(sys.stdin)["products"])))')
[ "$products" = "QTEventBus QTEventBusFoundation QTEventBusNATS" ] \
  || die "products: $products (want QTEventBus QTEventBusFoundation QTEventBusNATS)"
log "products: $products"

swift package dump-symbol-graph --minimum-access-level public >/dev/null
graphs=$(swift build --show-bin-path)/../symbolgraph
public=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(s["names"]["title"] for s in d["symbols"]))' \
  "$graphs/QTBusEngine.symbols.json")
[ -z "$public" ] || die "QTBusEngine declares public symbols: $public"
log "QTBusEngine: no public symbol"

modules=$(swift build --show-bin-path)/Modules
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/client.swift" <<'SWIFT'
import QTBusEngine
let bus = _qtbus_shared()
SWIFT
typecheck() { swiftc -typecheck -swift-version 6 -I "$modules" -I "$ROOT/Sources/CQtbusShims/include" "$@" "$tmp/client.swift"; }
if typecheck >"$tmp/out" 2>&1; then
  die "a client outside the package can call QTBusEngine's _qtbus_shared()"
fi
grep -q "cannot find '_qtbus_shared' in scope" "$tmp/out" || { cat "$tmp/out"; die "unexpected error (above)"; }
# The package name SwiftPM gave this package's modules (from its directory's name).
name=$(grep -o -m1 '"-package-name","[^"]*"' "$ROOT/.build/debug.yaml" | cut -d'"' -f4 || true)
[ -n "$name" ] || die "no -package-name in .build/debug.yaml"
typecheck -package-name "$name" >"$tmp/out" 2>&1 || { cat "$tmp/out"; die "control: inside the package it should type-check"; }
log "QTBusEngine's entry points: not reachable from another package (reachable from this one: the control)"
