#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# qtbus as a subproject (FetchContent / add_subdirectory) of cmake/subproject-test,
# configured with no build type (the case a top-level qtbus sets to Release): the
# parent's build type stays empty, no demo or test of qtbus is built,
# qtbus::qtbus links, and the parent's `cmake --install` installs the parent's files
# only (none of qtbus's: headers, pc file, CMake package).
# usage: scripts/subproject-test.sh [BUILD_DIR]   (default build/subproject-test)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

dir=${1:-$ROOT/build/subproject-test}
fresh_if_not_ninja "$dir"
cmake -G Ninja -S "$ROOT/cmake/subproject-test" -B "$dir" \
  -DQTBUS_SOURCE_DIR="$ROOT" -DCMAKE_BUILD_TYPE=
cmake --build "$dir"
env -u LD_LIBRARY_PATH ctest --test-dir "$dir" --output-on-failure

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$dir" --prefix "$stage" >/dev/null
installed=$(cd "$stage" && find . -type f -o -type l | sort)
echo "the parent's install: $(echo $installed)"
[ "$installed" = "./bin/app" ] || die "the parent's install holds more than its own bin/app"
echo "subproject-test: build type, targets and install left to the parent"
