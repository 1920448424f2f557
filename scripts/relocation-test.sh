#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed files work from wherever the prefix ends up.  From an already built
# BUILD directory (default build/), installs libqtbus three ways into a temporary
# directory and, for each, builds a C program with `pkg-config --cflags --libs qtbus`
# alone and one with find_package(qtbus) (cmake/consumer-test), and runs both with no
# LD_LIBRARY_PATH:
#   1. cmake --install BUILD --prefix P
#   2. DESTDIR=D cmake --install BUILD --prefix /opt/qtbus   (staging, as packagers do)
#   3. the prefix of 1 moved elsewhere after installing
# usage: scripts/relocation-test.sh [BUILD]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build=${1:-$ROOT/build}
[ -f "$build/CMakeCache.txt" ] || die "$build is not a configured build directory"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset PKG_CONFIG_PATH LD_LIBRARY_PATH

# consume NAME PREFIX: the two consumers against the install whose prefix is PREFIX.
consume() {
  local name=$1 prefix=$2 flags
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs qtbus)
  echo "$name: pkg-config --cflags --libs qtbus = $flags"
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror "$ROOT/cmake/consumer-test/main.c" $flags -o "$tmp/$name-pc"
  "$tmp/$name-pc"
  cmake -G Ninja -S "$ROOT/cmake/consumer-test" -B "$tmp/$name-cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$tmp/$name-cmake" >/dev/null
  echo "$name: find_package(qtbus) found $(sed -n 's/^qtbus_DIR:PATH=//p' "$tmp/$name-cmake/CMakeCache.txt")"
  "$tmp/$name-cmake/consumer"
}

log "1. cmake --install --prefix"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
consume prefix "$tmp/prefix"

log "2. DESTDIR staging (--prefix /opt/qtbus)"
DESTDIR="$tmp/stage" cmake --install "$build" --prefix /opt/qtbus >/dev/null
consume destdir "$tmp/stage/opt/qtbus"

log "3. the prefix of 1, moved"
mv "$tmp/prefix" "$tmp/moved"
rm -rf "$tmp/prefix-cmake"   # built against the old location
consume moved "$tmp/moved"

echo "relocation-test: pkg-config and find_package work after --prefix, DESTDIR and a move"
