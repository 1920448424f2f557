#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start: builds libqtbus (build/), installs it into _install/, compiles
# examples/demo.c the way a user would (pkg-config only) and runs it, with no
# LD_LIBRARY_PATH.  Installs only what building and running the library needs
# (scripts/deps.sh --build: no test tools, nothing from PyPI).  Safe to re-run; only
# what changed is rebuilt.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

log "dependencies"
bash "$ROOT/scripts/deps.sh" --build

log "build and install libqtbus into _install/"
build_install "$ROOT/build" "$ROOT/_install" -DCMAKE_BUILD_TYPE=Release

log "compile examples/demo.c with pkg-config"
export PKG_CONFIG_PATH="$ROOT/_install/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
flags=$(pkg-config --cflags --libs qtbus)
echo "cc examples/demo.c $flags -o build/demo"
# shellcheck disable=SC2086 # pkg-config output is a list of words
${CC:-cc} "$ROOT/examples/demo.c" $flags -o "$ROOT/build/demo"

log "run build/demo"
env -u LD_LIBRARY_PATH "$ROOT/build/demo"

log "done"
cat <<MSG
Installed under $ROOT/_install.  Use it from your own code with
  PKG_CONFIG_PATH=$ROOT/_install/lib/pkgconfig cc app.c \$(pkg-config --cflags --libs qtbus)
or, in CMake, find_package(qtbus) with -DCMAKE_PREFIX_PATH=$ROOT/_install.
Run every test with scripts/test.sh.
MSG
