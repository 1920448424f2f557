#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The one check that a libqtbus.so exports exactly the functions qtbus.h declares with
# QTBUS_API: none missing, nothing else (no Swift symbols, no runtime helpers, no
# variables, thread-local or not, no other qtbus_*), in .dynsym whatever the binding; and
# that each carries its symbol version: the version node of the map beside it
# (cmake/qtbus.map) that lists it by name, every declared function in exactly one node.
# The header is read by scripts/abi-probe.py, the parser the ABI check uses too.  Used
# by scripts/check-library.sh (build tree) and CTests (installed library, where the map
# is the source tree's).  Also libqtbus-nats.so against qtbus_nats.h (QTBUS_NATS_API,
# cmake/qtbus_nats.map).
# usage: scripts/check-exports.sh LIB HEADER [MAP]   (MAP: by default cmake/qtbus.map,
#        or cmake/qtbus_nats.map for qtbus_nats.h)
set -euo pipefail
export LC_ALL=C
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: check-exports.sh LIB HEADER [MAP]" >&2; exit 2; }
lib=$1 header=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case $(basename "$header") in
  qtbus_nats.h) map=${3:-$here/../cmake/qtbus_nats.map} ;;
  *) map=${3:-$here/../cmake/qtbus.map} ;;
esac
[ -r "$map" ] || { echo "check-exports: cannot read $map" >&2; exit 2; }
[ -r "$lib" ] || { echo "check-exports: cannot read $lib" >&2; exit 2; }
[ -r "$header" ] || { echo "check-exports: cannot read $header" >&2; exit 2; }

declared=$(python3 "$(dirname "${BASH_SOURCE[0]}")/abi-probe.py" --declared "$header" | sort -u)
# Every defined entry of .dynsym, of any kind and binding, without version suffixes.
# LOCAL entries count too: a linker can leave there the thread-local variables that
# TLS relocations name (gold did, for the C glue's and libdispatch's), which nm -D
# lists and a debugger or an interposer sees, though nothing can bind to them.
# The version nodes' own names (ABS entries the linker adds) are not functions.
dynsyms=$(readelf --dyn-syms -W "$lib" | awk '$1 ~ /^[0-9]+:$/ && $7 != "UND" && $4 != "SECTION" && $8 != "" \
  && !($7 == "ABS" && $8 ~ /^QTBUS(_NATS)?_[0-9]+\.[0-9]+$/) {print $8}')
exported=$(echo "$dynsyms" | sed 's/@.*//' | grep -Ev '^(_init|_fini|__bss_start|_edata|_end)$' | sort -u)

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

# Each function in exactly one node of the map, by name, and exported with that version
# as its default (name@@NODE).
nodes=$(python3 - "$map" <<'PY'
import re, sys
text = re.sub(r'/\*.*?\*/', '', open(sys.argv[1]).read(), flags=re.S)
for node, body in re.findall(r'([A-Z_0-9.]+)\s*\{(.*?)\}', text, flags=re.S):
    globals_ = body.split('local:')[0].replace('global:', '')
    for name in re.findall(r'([A-Za-z_][A-Za-z_0-9*]*)\s*;', globals_):
        print(name, node)
PY
)
wild=$(echo "$nodes" | awk '$1 ~ /\*/ {print $1 " in " $2}')
[ -z "$wild" ] || { echo "check-exports: FAIL: a wildcard in $(basename "$map") (list each function in its release's node): $wild"; status=1; }
twice=$(echo "$nodes" | awk '{print $1}' | sort | uniq -d)
[ -z "$twice" ] || { echo "check-exports: FAIL: in more than one node of $(basename "$map"): $twice"; status=1; }
for f in $declared; do
  node=$(echo "$nodes" | awk -v f="$f" '$1 == f {print $2; exit}')
  if [ -z "$node" ]; then
    echo "check-exports: FAIL: $f is in no version node of $(basename "$map")"; status=1; continue
  fi
  grep -qx "$f@@$node" <<<"$dynsyms" || { echo "check-exports: FAIL: $f is not exported as $f@@$node"; status=1; }
done
[ "$status" -ne 0 ] || echo "check-exports: OK: $(echo "$exported" | wc -l) functions exported, exactly those $(basename "$header") declares, each with its version node ($(echo "$nodes" | awk '{print $2}' | sort -u | tr '\n' ' ' | sed 's/ $//'))"
exit "$status"
