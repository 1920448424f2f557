#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The one check that a libqtbus.so exports exactly the functions qtbus.h declares with
# QTBUS_API: none missing, nothing else (no Swift symbols, no runtime helpers, no
# variables, thread-local or not, no other qtbus_*), in .dynsym whatever the binding.  The header is read by scripts/abi-probe.py, the parser the ABI check
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
# Every defined entry of .dynsym, of any kind and binding, without version suffixes.
# LOCAL entries count too: a linker can leave there the thread-local variables that
# TLS relocations name (gold did, for the C glue's and libdispatch's), which nm -D
# lists and a debugger or an interposer sees, though nothing can bind to them.
exported=$(readelf --dyn-syms -W "$lib" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $4 != "SECTION" && $8 != "" {print $8}' \
  | sed 's/@.*//' | grep -Ev '^(_init|_fini|__bss_start|_edata|_end)$' | sort -u)

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
