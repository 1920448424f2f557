#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# SwiftPM consumers of this package, as users write them (CONTRACT section 14, README's
# "Swift"):
#   1. by version: `.package(url:from: "X.Y.Z")` against a clone of this repository
#      resolves to the tag vX.Y.Z (Package.resolved names its commit), X.Y.Z being the
#      version of CMakeLists.txt's project().  When the clone has no such tag (the version
#      is in the making, or the clone was made without tags, as CI's is), the scratch
#      clone tags HEAD with it, as a release would: what is checked is that this commit's
#      manifest resolves as a versioned dependency.  When the clone has the tag v0.2.0
#      (the first release), `exact: "0.2.0"` must resolve to it too.
#   2. by path, under a directory not named qtbus: `.package(name: "qtbus", path:)`
#      with `.product(name: "QTEventBus", package: "qtbus")`, the README's lines, builds
#      and runs against the committed HEAD (the package works as a dependency: nothing
#      in its manifest that SwiftPM refuses in one, such as unsafe flags).
# usage: scripts/swiftpm-consumer-test.sh [WORKDIR]   (default: build/swiftpm-consumer)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

work=${1:-$ROOT/build/swiftpm-consumer}
rm -rf "$work"
mkdir -p "$work"
checkout=$work/checkout-of-the-bus
git clone -q "$ROOT" "$checkout"
version=$(sed -n 's/^project(qtbus VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
[ -n "$version" ] || die "no project(qtbus VERSION ...) in CMakeLists.txt"
if ! git -C "$checkout" rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
  git -C "$checkout" -c user.name=consumer-test -c user.email=consumer-test@localhost \
    tag -a "v$version" -m "scratch tag of the consumer test" HEAD
  log "no tag v$version: tagged HEAD with it in the scratch clone"
fi
release=$(git -C "$checkout" rev-parse "v$version^{commit}")

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

resolve() {  # resolve DIR REQUIREMENT VERSION COMMIT: the pin SwiftPM chose is that one
  consumer "$1" ".package(url: \"file://$checkout\", $2)" "checkout-of-the-bus"
  (cd "$1" && swift package resolve)
  local got
  got=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["pins"][0]["state"]; print(p.get("version"), p["revision"])' \
    "$1/Package.resolved")
  [ "$got" = "$3 $4" ] || die "$2 resolved '$got', want '$3 $4'"
  log "$2 resolved $3 at $4"
}
log "1. by version: .package(url: \"file://$checkout\", from: \"$version\")"
resolve "$work/by-version" "from: \"$version\"" "$version" "$release"
if git -C "$checkout" rev-parse -q --verify "refs/tags/v0.2.0" >/dev/null; then
  resolve "$work/by-version-0.2.0" "exact: \"0.2.0\"" 0.2.0 "$(git -C "$checkout" rev-parse "v0.2.0^{commit}")"
else
  log "no tag v0.2.0 in this clone (made without tags?): the first release is not checked"
fi

log "2. by path under another directory name: .package(name: \"qtbus\", path:)"
consumer "$work/by-path" ".package(name: \"qtbus\", path: \"../checkout-of-the-bus\")" "qtbus"
out=$(cd "$work/by-path" && swift build -q 2>&1 && "$(swift build --show-bin-path)/App") || { echo "$out"; die "the by-path consumer failed"; }
echo "$out"
[ "$(echo "$out" | tail -1)" = "consumer: got 2" ] || die "the consumer printed '$out', want 'consumer: got 2'"
log "scripts/swiftpm-consumer-test.sh: passed"
