#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ABI check: compares the C ABI of libqtbus with the committed baseline
# abi/libqtbus.so.<SONAME major>.<machine>.abi (libabigail's abidw/abidiff, Debian abigail-tools),
# and fails on any change that could break a program built against the baseline.
#
#   scripts/abi-check.sh [--update] [LIB [HEADER]]    (defaults build/libqtbus.so, include/qtbus.h)
#
# What is compared, and why this way: libqtbus's entry points are Swift @_cdecl
# functions, so its DWARF (if any: the release build has none) describes Swift, not
# qtbus.h's C types, and comparing its ELF symbols alone would catch a removed function
# but not a changed struct or parameter.  So the check builds the header's "ABI image"
# (scripts/abi-probe.py: every QTBUS_API function defined with the header's own
# prototype, and every public integer #define and enumerator as an enumerator of one
# function's parameter type) with -g into a probe .so that is never shipped, and abidiff
# compares that with the baseline: functions, parameter and return types, the layout of
# every struct reachable from them, status codes and flag values.  The image includes
# only qtbus.h, so every type it describes is the header's (or the C library's).  The
# built library is tied to the image by its exports: they must be exactly the header's
# functions (scripts/check-exports.sh), which are the image's.  None of this depends on
# how the library carries the Swift runtime.
# String #defines (event type names) are pinned by CTests/test_abi.c; struct layouts and
# flag values are pinned there too, and the status codes by CTests/test_status_strings.c.
#
# Pass: no change, or only additions (a new function, a new status code or flag).
# Fail: a removed function, or a changed one (a parameter's or a return type, a struct
# field added, removed or retyped, a changed status or flag value), or exports that are
# not the header's.  abidiff's exit code has bit 8 (incompatible) only for removals: a
# changed struct or parameter is bit 4 (a change), as an addition is; so the check
# fails on bit 8 or on any "Removed" or "Changed" in abidiff's summaries, which count
# only what abidiff does not judge harmless (an added enumerator is).  The exports
# check and abidiff's report are printed either way.
#
# --update rewrites the baseline from the current header.  Use it for additions (so
# that the next release is compared with them), or together with a SONAME bump
# (project(VERSION) major and SOVERSION), which starts a new baseline file.  It compares
# first and refuses to record an incompatible change over the baseline of the same
# SONAME: to override that on purpose (a baseline that is itself wrong), delete the file
# in the same commit, where review sees it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

update=0
if [ "${1:-}" = --update ]; then update=1; shift; fi
lib=${1:-$ROOT/build/libqtbus.so}
header=${2:-$ROOT/include/qtbus.h}
[ -e "$lib" ] || die "no library at $lib (build first: scripts/quickstart.sh)"
[ -e "$header" ] || die "no header at $header"

apt_install abi-check abigail-tools binutils

soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ -n "$soname" ] || die "$lib has no SONAME"
# Per architecture: type sizes and layouts are.
baseline=$ROOT/abi/$soname.$(uname -m).abi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 "$ROOT/scripts/abi-probe.py" "$header" "$work/image.c" "${CC:-cc}"
"${CC:-cc}" -std=gnu2x -g -O0 -fPIC -shared -w "$work/image.c" -o "$work/libqtbus-abi-image.so"

# The library exports exactly the header's functions, which are the image's.
exports=0
bash "$ROOT/scripts/check-exports.sh" "$lib" "$header" || exports=1

abidw_args=(--no-corpus-path --no-comp-dir-path --short-locs)
if [ "$update" = 1 ] && [ "$exports" -ne 0 ]; then
  die "the exports of $lib are not the ABI of $header"
fi
if [ "$update" = 1 ] && [ ! -e "$baseline" ]; then
  mkdir -p "$(dirname "$baseline")"
  abidw "${abidw_args[@]}" --out-file "$baseline" "$work/libqtbus-abi-image.so"
  echo "abi-check: started $baseline (a new SONAME)"
  exit 0
fi
[ -e "$baseline" ] || die "no baseline $baseline for SONAME $soname (a new SONAME starts one: --update)"

set +e
abidiff --no-show-locs "$baseline" "$work/libqtbus-abi-image.so" >"$work/report"
status=$?
set -e
cat "$work/report"
if [ $((status & 3)) -ne 0 ]; then die "abidiff failed to run (exit $status)"; fi
# "Functions changes summary: 0 Removed, 1 Changed (2 filtered out), 3 Added functions"
broken=$(sed -n 's/^\(Functions\|Variables\) changes summary: \([0-9]*\) Removed, \([0-9]*\) Changed.*/\2 \3/p' "$work/report" \
  | awk '{n += $1 + $2} END {print n + 0}')
if [ $((status & 8)) -ne 0 ] || [ "$broken" -ne 0 ]; then
  echo "abi-check: FAILED: an incompatible change to the ABI of $soname (abidiff exit $status, $broken removed or changed)"
  echo "  If it is meant, bump the SONAME (docs/operations.md: Versioning and ABI) and start its baseline with --update."
  [ "$update" = 0 ] || echo "abi-check: --update refused: $baseline records what $soname promises"
  exit 1
fi
if [ "$update" = 1 ]; then
  abidw "${abidw_args[@]}" --out-file "$baseline" "$work/libqtbus-abi-image.so"
  echo "abi-check: wrote $baseline (compatible with the one it replaces)"
  exit 0
fi
if [ "$exports" -ne 0 ]; then
  echo "abi-check: FAILED: the exports of $lib are not the functions of $header"
  exit 1
fi
if [ $((status & 4)) -ne 0 ]; then
  echo "abi-check: OK: only additions since the baseline (record them with scripts/abi-check.sh --update)"
elif grep -q 'filtered out' "$work/report"; then
  echo "abi-check: OK: compatible with the baseline (abidiff filtered out harmless changes, such as an added status code)"
else
  echo "abi-check: OK: the ABI of $soname is the baseline's"
fi
