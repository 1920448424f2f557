#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SwiftPM consumers of this package, as users write them (CONTRACT section 14, README's
# "Swift"):
#   1. by version: `.package(url:from: "0.2.0")` against a clone of this repository with
#      its tags resolves to the release tag v0.2.0 (Package.resolved names its commit);
#   2. by path, under a directory not named qtbus: `.package(name: "qtbus", path:)`
#      with `.product(name: "QTEventBus", package: "qtbus")`, the README's lines, builds
#      and runs against the committed HEAD (the package works as a dependency: nothing
#      in its manifest that SwiftPM refuses in one, such as unsafe flags).
# A clone made without tags (git clone --no-tags) has no release to resolve: then 1
# fails, naming the missing tag.
# usage: scripts/swiftpm-consumer-test.sh [WORKDIR]   (default: build/swiftpm-consumer)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

work=${1:-$ROOT/build/swiftpm-consumer}
rm -rf "$work"
mkdir -p "$work"
checkout=$work/checkout-of-the-bus
git clone -q "$ROOT" "$checkout"
git -C "$checkout" rev-parse -q --verify "refs/tags/v0.2.0" >/dev/null \
  || die "no tag v0.2.0 in $ROOT (a clone without tags? git fetch --tags)"
release=$(git -C "$checkout" rev-parse "v0.2.0^{commit}")

consumer() {  # consumer DIR DEPENDENCY PACKAGE: a package whose executable uses QTEventBus
  local dir=$1
  mkdir -p "$dir/Sources/App"
  cat >"$dir/Package.swift" <<EOF
// swift-tools-version:5.9
import PackageDescription
let package = Package(
    name: "App",
    dependencies: [$2],
    targets: [.executableTarget(name: "App", dependencies: [.product(name: "QTEventBus", package: "$3")])]
)
EOF
  cat >"$dir/Sources/App/main.swift" <<'EOF'
import QTEventBus
struct Ping: QTEvent { let n: Int }
let bus = QTEventBus()
nonisolated(unsafe) var got = 0
let token = bus.on(Ping.self).next { got += $0.n }
bus.dispatch(Ping(n: 2))
token.dispose()
print("consumer: got \(got)")
EOF
}

log "1. by version: .package(url: \"file://$checkout\", from: \"0.2.0\")"
consumer "$work/by-version" ".package(url: \"file://$checkout\", from: \"0.2.0\")" "checkout-of-the-bus"
(cd "$work/by-version" && swift package resolve)
resolved=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["pins"][0]["state"]; print(p.get("version"), p["revision"])' \
  "$work/by-version/Package.resolved")
[ "$resolved" = "0.2.0 $release" ] || die "resolved '$resolved', want '0.2.0 $release' (v0.2.0)"
log "resolved 0.2.0 at $release"

log "2. by path under another directory name: .package(name: \"qtbus\", path:)"
consumer "$work/by-path" ".package(name: \"qtbus\", path: \"../checkout-of-the-bus\")" "qtbus"
out=$(cd "$work/by-path" && swift build -q 2>&1 && "$(swift build --show-bin-path)/App") || { echo "$out"; die "the by-path consumer failed"; }
echo "$out"
[ "$(echo "$out" | tail -1)" = "consumer: got 2" ] || die "the consumer printed '$out', want 'consumer: got 2'"
log "scripts/swiftpm-consumer-test.sh: passed"
