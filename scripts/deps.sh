#!/usr/bin/env bash
# Installs what the build and test scripts need and a fresh Debian/Ubuntu machine with
# only swift, gcc, python3 and git lacks: cmake (>= 3.25), ninja, pkg-config, valgrind,
# libc6-dbg, binutils.  Installs nothing when everything is present; otherwise runs
# apt-get update once, then apt-get install -y (as root, or through sudo -n).
set -euo pipefail

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_pkg() { dpkg -s "$1" >/dev/null 2>&1 || missing+=("$1"); }

need_cmd cmake cmake
need_cmd ninja ninja-build
need_cmd pkg-config pkg-config
need_cmd valgrind valgrind
need_cmd readelf binutils
need_cmd nm binutils
# glibc's symbols for valgrind: readable stacks, and the frames scripts/valgrind.supp names.
need_pkg libc6-dbg

if [ ${#missing[@]} -gt 0 ]; then
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  echo "deps: installing ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    echo "deps: need root (or passwordless sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${as_root[@]}" apt-get update -q </dev/null
  "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
fi

for tool in swift swiftc cc python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "deps: $tool not found on PATH" >&2; exit 1; }
done
cmake_version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')
if ! printf '3.25\n%s\n' "$cmake_version" | sort -V -C; then
  echo "deps: cmake $cmake_version is too old (need >= 3.25)" >&2
  exit 1
fi
echo "deps: ok (cmake $cmake_version, $(ninja --version 2>/dev/null | sed 's/^/ninja /'), $(swiftc --version 2>/dev/null | head -1))"
