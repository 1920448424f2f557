#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The soak (docs/operations.md, "Reliability"): Tests/Soak/soak.c, 4 threads of random
# calls of every family on buses destroyed and created again meanwhile, checking rules 1
# and 2 with a global ticket clock, object_release exactly once and a flat RSS.
#
#   scripts/soak.sh [SECONDS]      (default 60)
#
# Builds and installs the library as scripts/test.sh does (build/, _install/).  A minute
# of it runs in scripts/sanitize.sh (part soak, against the AddressSanitizer build).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

build_install "$ROOT/build" "$ROOT/_install" -DCMAKE_BUILD_TYPE=Release
mkdir -p "$ROOT/build/soak"
# shellcheck disable=SC2046
${CC:-cc} -std=c11 -O2 -g -Wall -Wextra -pthread Tests/Soak/soak.c -o "$ROOT/build/soak/soak" \
  $(PKG_CONFIG_PATH="$ROOT/_install/lib/pkgconfig" pkg-config --cflags --libs qtbus)
env -u LD_LIBRARY_PATH "$ROOT/build/soak/soak" "${1:-60}"
