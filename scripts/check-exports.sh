#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The one check that a libqtbus.so exports exactly the functions qtbus.h declares with
# QTBUS_API: none missing, nothing else (no Swift symbols, no runtime helpers, no
# other qtbus_*).  The header is read by scripts/abi-probe.py, the parser the ABI check
# uses too.  Used by scripts/check-library.sh (build tree) and CTests (installed library).
# Also libqtbus-nats.so against qtbus_nats.h (QTBUS_NATS_API).
# usage: scripts/check-exports.sh LIB HEADER
set -euo pipefail
export LC_ALL=C
[ $# -eq 2 ] || { echo "usage: check-exports.sh LIB HEADER" >&2; exit 2; }
lib=$1 header=$2
[ -r "$lib" ] || { echo "check-exports: cannot read $lib" >&2; exit 2; }
[ -r "$header" ] || { echo "check-exports: cannot read $header" >&2; exit 2; }

declared=$(python3 "$(dirname "${BASH_SOURCE[0]}")/abi-probe.py" --declared "$header" | sort -u)
# Defined, global dynamic symbols, without version suffixes.  LOCAL entries of .dynsym
# are not exported: the linker keeps the thread-local variables that TLS relocations
# name there (qtshim_tls_record, and libdispatch's __dispatch_tsd when the runtime is
# linked in), bound to this library alone.
exported=$(nm -D --defined-only --extern-only "$lib" | awk '{print $NF}' | sed 's/@.*//' \
  | grep -Ev '^(_init|_fini|__bss_start|_edata|_end)$' | sort -u)

[ -n "$declared" ] || { echo "check-exports: FAIL: no QTBUS_API declaration in $header"; exit 1; }
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
status=0
if [ -n "$missing" ]; then
  echo "check-exports: FAIL: declared in $(basename "$header") but not exported (is its @_cdecl function there, and listed in cmake/qtbus.map?):"
  echo "$missing" | sed 's/^/    /'
  status=1
fi
if [ -n "$extra" ]; then
  echo "check-exports: FAIL: exported but not declared in $(basename "$header"):"
  echo "$extra" | sed 's/^/    /'
  status=1
fi
[ "$status" -ne 0 ] || echo "check-exports: OK: $(echo "$exported" | wc -l) functions exported, exactly those $(basename "$header") declares"
exit "$status"
