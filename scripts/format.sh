#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The formatters, so that the style is kept by tools, not by hand:
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; fail, listing the files, when one is not
#                               formatted (the test command's format step)
# Swift: the toolchain's `swift format`, configured by .swift-format (4-space indents,
# 120 columns, the rules that would rename or restructure code turned off). C and C++:
# clang-format, configured by .clang-format; Debian's clang-format package (deps.sh
# installs it), whose version is pinned by the check below, since another version
# formats some lines differently. The files: every tracked .swift, .c, .h, .cpp and .hpp
# that is not a symbolic link.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

check=0
case ${1:-} in
  --check) check=1 ;;
  "") ;;
  *) die "usage: scripts/format.sh [--check]" ;;
esac

command -v clang-format >/dev/null 2>&1 || die "clang-format not found (scripts/deps.sh installs it)"
clang_version=$(clang-format --version | sed -n 's/.*clang-format version \([0-9]*\)\..*/\1/p')
[ "$clang_version" = 14 ] || die "clang-format $clang_version: .clang-format is kept with version 14 (Debian bookworm's)"

# Regular files only (mode 100644/100755): a formatter writing through a symbolic link
# (Sources/CQtbusNATS/include/qtbus.h -> include/qtbus.h) replaces the link with a copy.
tracked() { git ls-files -s -- "$@" | awk '$1 != "120000" { sub(/^[^\t]*\t/, ""); print }'; }
mapfile -t swift_files < <(tracked '*.swift')
mapfile -t c_files < <(tracked '*.c' '*.h' '*.cpp' '*.hpp')

if [ "$check" = 0 ]; then
  swift format format --in-place --configuration .swift-format "${swift_files[@]}"
  clang-format -i "${c_files[@]}"
  log "formatted ${#swift_files[@]} Swift and ${#c_files[@]} C/C++ files"
  exit 0
fi

status=0
# swift format lint prints one line per finding, file:line:column: warning: ...
if ! out=$(swift format lint --strict --configuration .swift-format "${swift_files[@]}" 2>&1); then
  echo "$out" | head -40
  echo "format: Swift files not formatted: $(echo "$out" | cut -d: -f1 | sort -u | wc -l) (scripts/format.sh rewrites them)"
  status=1
fi
if ! out=$(clang-format --dry-run --Werror "${c_files[@]}" 2>&1); then
  echo "$out" | head -40
  echo "format: C/C++ files not formatted: $(echo "$out" | grep -o '^[^:]*\.[ch]p*:' | sort -u | wc -l) (scripts/format.sh rewrites them)"
  status=1
fi
[ "$status" -ne 0 ] || log "format: ${#swift_files[@]} Swift and ${#c_files[@]} C/C++ files formatted as .swift-format and .clang-format say"
exit "$status"
