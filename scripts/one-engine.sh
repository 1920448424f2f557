#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One engine per process.  From any directory:  scripts/one-engine.sh
#
# A C plugin that links libqtbus (Tests/OneEngine/plugin.c, built with nothing but
# `pkg-config --cflags --libs qtbus`) is dlopen()ed by a SwiftPM program using
# QTEventBus (Tests/OneEngine/Package.swift).  Checks:
#   1. the host linked with --dynamic-list (exporting qtbus_*) exports exactly the C ABI
#      libqtbus.so exports, and the plugin and the Swift code share one qtbus_shared()
#      with events crossing both ways (exit 0 expected);
#   2. the control, the same host linked without it, finds two engines (exit 3 expected),
#      and the library said so: once on stderr, and in qtbus_errmsg() of the plugin's
#      thread (the host checks that; qtbus.h, ONE ENGINE PER PROCESS).
#
# Uses the installed library pkg-config finds: PKG_CONFIG_PATH as scripts/test.sh sets it
# ($ROOT/_install/lib/pkgconfig), which is also the default here.  Scratch: .build-oneengine/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

if ! pkg-config --exists qtbus 2>/dev/null; then
  export PKG_CONFIG_PATH="$ROOT/_install/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  pkg-config --exists qtbus 2>/dev/null ||
    die "pkg-config does not find qtbus: install it first (scripts/quickstart.sh) or set PKG_CONFIG_PATH"
fi

FIXTURE=$ROOT/Tests/OneEngine
SCRATCH=$ROOT/.build-oneengine
PLUGIN=$SCRATCH/libqtbus_oneengine_plugin.so
mkdir -p "$SCRATCH"

log "plugin: Tests/OneEngine/plugin.c against $(pkg-config --variable=libdir qtbus)"
flags=$(pkg-config --cflags --libs qtbus)
echo "${CC:-cc} -std=c11 -Wall -Wextra -Werror -shared -fPIC Tests/OneEngine/plugin.c $flags"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -Werror -shared -fPIC "$FIXTURE/plugin.c" $flags -o "$PLUGIN"

log "host: swift build (Tests/OneEngine, both variants)"
swift build --package-path "$FIXTURE" --scratch-path "$SCRATCH" || die "swift build of Tests/OneEngine failed"
BIN=$(swift build --package-path "$FIXTURE" --scratch-path "$SCRATCH" --show-bin-path)

log "exports"
# By name: the library's carry their version nodes (qtbus_x@@QTBUS_0.2), the host's none
# (a plugin's versioned reference binds to an unversioned definition).
exports() { nm -D --defined-only "$1" | awk '$2 == "T" && $3 ~ /^qtbus_/ { sub(/@.*/, "", $3); print $3 }' | sort; }
libqtbus=$(pkg-config --variable=libdir qtbus)/libqtbus.so
if ! diff <(exports "$libqtbus") <(exports "$BIN/one-engine-host") >/dev/null; then
  diff <(exports "$libqtbus") <(exports "$BIN/one-engine-host") || true
  die "one-engine-host does not export exactly libqtbus.so's qtbus_* (diff above: < library, > host)"
fi
echo "one-engine-host exports the same $(exports "$libqtbus" | wc -l) qtbus_* functions as libqtbus.so"
n=$(exports "$BIN/one-engine-host-noexport" | wc -l)
echo "one-engine-host-noexport exports $n"

failed=0
warning='two qtbus engines are in use in this process'
# expect STATUS WARNS WHAT-IT-MEANS HOST: runs HOST on the plugin and wants exit STATUS,
# and the second-engine warning on stderr exactly once (WARNS=1) or not at all (0).
expect() {
  local want=$1 warns=$2 meaning=$3 host=$4 status err count
  err=$(mktemp)
  set +e
  env -u LD_LIBRARY_PATH "$BIN/$host" "$PLUGIN" 2>"$err"
  status=$?
  set -e
  cat "$err" >&2
  count=$(grep -c "$warning" "$err" || true)
  rm -f "$err"
  if [ "$status" -eq "$want" ] && [ "$count" -eq "$warns" ]; then
    echo "$meaning"
  else
    echo "FAIL: $host exited $status and warned $count times (expected $want and $warns: $meaning)"
    failed=1
  fi
}
log "one engine: host linked with --dynamic-list"
expect 0 0 "one engine: the plugin and the Swift code share qtbus_shared(), and nothing warns" one-engine-host
log "control: the same host without the export"
expect 3 1 "control: without the export, two engines (as expected; otherwise the check above proves nothing), said once on stderr and in the plugin's qtbus_errmsg()" \
  one-engine-host-noexport

[ "$failed" -eq 0 ] || exit 1
echo "scripts/one-engine.sh: passed"
