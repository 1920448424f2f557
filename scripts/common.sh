# Shared by the scripts in this directory (sourced, not run).
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ROOT

if [ -t 1 ]; then
  log() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
else
  log() { printf '\n==> %s\n' "$*"; }
fi
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The Swift toolchain in use (the one swiftc on PATH belongs to) and its clang, whose
# sanitizer runtimes match the ones Swift's -sanitize= uses.
swift_bin_dir() { dirname "$(readlink -f "$(command -v swiftc)")"; }

# A build directory made by another generator cannot be reconfigured with Ninja:
# start it again rather than fail.
fresh_if_not_ninja() {
  local dir=$1
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
    echo "note: $dir was configured with another generator; removing it"
    rm -rf "$dir"
  fi
}

# build_install BUILD_DIR PREFIX [cmake args...]: configure (Ninja), build and install
# libqtbus.  Re-running only rebuilds what changed.
build_install() {
  local build=$1 prefix=$2
  shift 2
  fresh_if_not_ninja "$build"
  cmake -G Ninja -S "$ROOT" -B "$build" -DCMAKE_INSTALL_PREFIX="$prefix" "$@"
  cmake --build "$build"
  cmake --install "$build"
}
