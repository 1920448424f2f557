#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs C programs linked against the installed libqtbus with the Swift toolchain hidden,
# as on a machine that never had one: in a private mount namespace (unshare -m; as a
# non-root user, inside a user namespace too) an empty directory is bind-mounted over
# the toolchain's prefix, then the given commands run there.  The check that the
# toolchain really is gone is made inside, before the commands.
# usage: scripts/no-toolchain-test.sh COMMAND [ARGS...] [-- COMMAND [ARGS...]]...
#   exits non-zero if any command fails (or if the toolchain cannot be hidden).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ $# -gt 0 ] || die "usage: no-toolchain-test.sh COMMAND [ARGS...] [-- COMMAND...]"

# <prefix>/usr/bin/swiftc -> <prefix>; a toolchain installed in /usr itself is hidden by
# its runtime directories only (hiding /usr would hide libc).
bin=$(swift_bin_dir)
top=$(dirname "$(dirname "$bin")")
if [ "$(basename "$(dirname "$bin")")" = usr ] && [ "$top" != / ]; then
  hide=("$top")
else
  hide=("$(dirname "$bin")/lib/swift" "$(dirname "$bin")/lib/swift_static")
fi
echo "hiding the Swift toolchain: ${hide[*]}"

if [ "$(id -u)" -eq 0 ]; then ns=(unshare -m); else ns=(unshare -r -m); fi
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT

# Inside: bind the empty directory over each hidden path, prove libswiftCore is nowhere
# the loader or the toolchain path would find it, then run each command.
inner='
set -eu
empty=$1; shift
while [ "$1" != "---" ]; do mount --bind "$empty" "$1"; shift; done
shift
if command -v swiftc >/dev/null 2>&1 && swiftc --version >/dev/null 2>&1; then
  echo "no-toolchain-test: swiftc still runs" >&2; exit 1
fi
cache=$(ldconfig -p 2>/dev/null || true)
if grep -q "libswiftCore\.so" <<<"$cache"; then
  echo "no-toolchain-test: the loader cache still knows libswiftCore.so" >&2; exit 1
fi
echo "toolchain hidden: swiftc gone, no libswiftCore.so known to the loader"
status=0
run() { echo "+ $*"; "$@" || { echo "no-toolchain-test: FAILED: $*" >&2; status=1; }; }
cmd=()
for a in "$@"; do
  if [ "$a" = -- ]; then run "${cmd[@]}"; cmd=(); else cmd+=("$a"); fi
done
[ ${#cmd[@]} -eq 0 ] || run "${cmd[@]}"
exit $status
'
env -u LD_LIBRARY_PATH "${ns[@]}" bash -c "$inner" no-toolchain "$empty" "${hide[@]}" --- "$@"
