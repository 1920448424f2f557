#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test command.  From any directory:
#   scripts/test.sh          run every step
#   scripts/test.sh --list   print the steps: the table STEPS below, in the order they run
#   scripts/test.sh STEP...  run only those steps (ids from --list), in the table's order;
#                            a step they need but do not name counts as passed (run earlier)
#
# STEPS is the one list of the steps: the run, the skips and --list all read it, and
# .ci/run and the docs point here rather than copying it.  A row is
#   id | needs | function | what the step checks (also its name in the log and summary)
# where needs is "-" (always runs), the id of an earlier step that must have passed
# (otherwise the step is recorded as SKIP), or "installed" (an installed qtbus.pc in
# _install/, from this run or an earlier one).  The first step, deps, installs what the
# others use: when it fails the run stops there.  Every other step runs even when an
# earlier independent one failed; the summary at the end lists them all, and the exit
# status is non-zero if any failed or was skipped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

BUILD=$ROOT/build
PREFIX=$ROOT/_install
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"


do_deps() { bash "$ROOT/scripts/deps.sh"; }
do_layers() { python3 "$ROOT/scripts/layers.py" && python3 "$ROOT/scripts/layers.py" --check-drawing; }
do_nats_layers() { python3 "$ROOT/scripts/nats-layers.py"; }
do_source_check() { python3 "$ROOT/scripts/source-check.py"; }
do_format() { bash "$ROOT/scripts/format.sh" --check; }
do_build() { build_install "$BUILD" "$PREFIX" -DCMAKE_BUILD_TYPE=Release -DQTBUS_BUILD_TESTS=ON -DQTBUS_NATS=ON; }
do_abi_check() { bash "$ROOT/scripts/abi-check.sh" "$BUILD/libqtbus.so" "$ROOT/include/qtbus.h"; }
do_library_checks() { env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD" --output-on-failure; }
do_probes() { bash "$ROOT/scripts/probes-test.sh" "$PREFIX"; }
do_pkgconfig_consumer() {
  need_cxx
  local flags example
  flags=$(pkg-config --cflags --libs qtbus)
  # Built into $BUILD/<name> (no-toolchain-test.sh runs $BUILD/demo and $BUILD/messaging again).
  for example in demo messaging signals inspect logger; do
    echo "cc examples/$example.c $flags"
    # shellcheck disable=SC2086
    ${CC:-cc} -std=c11 -Wall -Wextra -pedantic -Werror "$ROOT/examples/$example.c" $flags -o "$BUILD/$example"
    env -u LD_LIBRARY_PATH "$BUILD/$example"
  done
  echo "c++ examples/demo.cpp $flags"
  # shellcheck disable=SC2086
  ${CXX:-c++} -std=c++17 -Wall -Wextra -pedantic -Werror "$ROOT/examples/demo.cpp" $flags -o "$BUILD/demo-cpp"
  env -u LD_LIBRARY_PATH "$BUILD/demo-cpp"
}
# g++: the C++ consumer and tests, and CTests' C++17 header check (Debian's gcc
# package does not bring it).
need_cxx() { apt_install c++ g++; }
do_cxx_tests() {
  # qtbus.hpp and qtbus_nats.hpp with both compilers users have: Debian's g++ and the
  # toolchain's clang++; the bridge's test against a nats-server it starts.
  need_cxx
  local cxx name
  for cxx in "${CXX:-g++}" "$(swift_bin_dir)/clang++"; do
    name=$(basename "$cxx")
    fresh_if_not_ninja "$BUILD/cxxtests-$name"
    cmake -G Ninja -S "$ROOT/CxxTests" -B "$BUILD/cxxtests-$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="$cxx" -DQTBUS_NATS_TESTS=ON
    cmake --build "$BUILD/cxxtests-$name"
    env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/cxxtests-$name" --output-on-failure
  done
}
do_nats_demo() { need_cxx; bash "$ROOT/scripts/nats-demo.sh" "$PREFIX"; }
do_deployment() { bash "$ROOT/examples/deployment/try.sh" "$PREFIX"; }
do_tracing() { bash "$ROOT/examples/tracing/run.sh" "$PREFIX" "$QTBUS_VENV/bin/python3"; }
do_swift_nats_demo() { bash "$ROOT/scripts/nats-demo.sh" --swift "$(swift build --show-bin-path)/qtbus-nats-demo"; }
do_cmake_consumer() {
  fresh_if_not_ninja "$BUILD/consumer-test"
  cmake -G Ninja -S "$ROOT/cmake/consumer-test" -B "$BUILD/consumer-test" -DCMAKE_PREFIX_PATH="$PREFIX" \
    -DREQUIRE_NATS=ON
  cmake --build "$BUILD/consumer-test"
  env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/consumer-test" --output-on-failure
}
do_c_tests() {
  need_cxx
  [ -f "$ROOT/CTests/CMakeLists.txt" ] || { echo "CTests/CMakeLists.txt not found"; return 1; }
  fresh_if_not_ninja "$BUILD/ctests"
  cmake -G Ninja -S "$ROOT/CTests" -B "$BUILD/ctests" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DQTBUS_NATS_TESTS=ON -DQTBUS_PYTHON3="$QTBUS_VENV/bin/python3"
  cmake --build "$BUILD/ctests"
  env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/ctests" --output-on-failure
}
do_relocation() { bash "$ROOT/scripts/relocation-test.sh" "$BUILD"; }
do_subproject() { bash "$ROOT/scripts/subproject-test.sh" "$BUILD/subproject-test"; }
do_no_toolchain() {
  bash "$ROOT/scripts/no-toolchain-test.sh" "$BUILD/demo" -- "$BUILD/messaging" \
    -- ctest --test-dir "$BUILD/ctests" --output-on-failure
}
# The full-runtime variants (QTBUS_SWIFT_RUNTIME, cmake/qtbus_library.cmake): for a
# platform whose toolchain has no Embedded Swift.  static is 0.2.0's library; the C
# tests run against it installed, as against the shipped one.
do_full_runtime() {
  need_cxx
  local install=$BUILD/full-install
  build_install "$BUILD/full" "$install" -DCMAKE_BUILD_TYPE=Release -DQTBUS_SWIFT_RUNTIME=static \
    -DQTBUS_BUILD_TESTS=ON -DQTBUS_NATS=ON
  env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/full" --output-on-failure
  fresh_if_not_ninja "$BUILD/ctests-full"
  PKG_CONFIG_PATH="$install/lib/pkgconfig" cmake -G Ninja -S "$ROOT/CTests" -B "$BUILD/ctests-full" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$install" -DQTBUS_NATS_TESTS=ON \
    -DQTBUS_PYTHON3="$QTBUS_VENV/bin/python3"
  cmake --build "$BUILD/ctests-full"
  # The tests link the full-runtime library, not the shipped one in _install/.
  local lib
  lib=$(env -u LD_LIBRARY_PATH ldd "$BUILD/ctests-full/test_dispatch_basic" | awk '/libqtbus\.so/ {print $3}')
  [ "$(realpath -e "${lib:-/nonexistent}")" = "$(realpath -e "$install/lib/libqtbus.so.0")" ] \
    || { echo "the C tests link ${lib:-no libqtbus}, not $install/lib's"; return 1; }
  env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/ctests-full" --output-on-failure
}
do_shared_runtime() {
  build_install "$BUILD/shared" "$BUILD/shared-install" -DCMAKE_BUILD_TYPE=Release \
    -DQTBUS_SWIFT_RUNTIME=shared -DQTBUS_BUILD_TESTS=ON
  env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/shared" --output-on-failure
  # The control: the same demo on this variant needs the toolchain's libswiftCore.so.
  local out
  if out=$(bash "$ROOT/scripts/no-toolchain-test.sh" "$BUILD/shared/qtbus-demo" 2>&1); then
    echo "$out"
    echo "the shared-runtime demo ran with the toolchain hidden: the hiding proves nothing"
    return 1
  fi
  grep -q "libswiftCore.so: cannot open shared object file" <<<"$out" \
    || { echo "$out"; echo "the shared-runtime demo failed for another reason"; return 1; }
  echo "control: the shared-runtime demo does not start without the toolchain (libswiftCore.so: cannot open shared object file), as expected"
}
do_package() { bash "$ROOT/scripts/package-test.sh"; }
do_oom() { bash "$ROOT/scripts/oom-sweep.sh" both; }
do_one_engine() { bash "$ROOT/scripts/one-engine.sh"; }
do_swift_build() { swift build; }
do_swift_test() { swift test; }
do_docs() { bash "$ROOT/scripts/docs.sh"; }
do_swift_surface() { bash "$ROOT/scripts/swift-surface.sh"; }
do_swiftpm_consumer() { bash "$ROOT/scripts/swiftpm-consumer-test.sh"; }
do_bench_smoke() { bash "$ROOT/scripts/bench.sh" --smoke; }
do_readme() {
  # Headers of the main-loop fragments (GLib, libuv), so they compile rather than skip.
  apt_install readme-snippets libglib2.0-dev libuv1-dev
  python3 "$ROOT/scripts/readme-snippets.py"
}

STEPS=(
  "deps           | -           | do_deps               | dependencies (scripts/deps.sh)"
  "layers         | -           | do_layers             | engine layers: calls go down but for the hooks, docs/layout.md draws the tree (scripts/layers.py)"
  "nats-layers    | -           | do_nats_layers        | NATS bridge layers: each nats/*.c calls only files below it in bridge.h's table (scripts/nats-layers.py)"
  "source-check   | -           | do_source_check       | source habits: an SPDX line in every source file, no measured figure in the library's comments, README.md within 320 lines, CQtbusNATS's links still links (scripts/source-check.py)"
  "format         | -           | do_format             | format: swift format and clang-format would change nothing (scripts/format.sh --check; scripts/format.sh rewrites)"
  "build          | -           | do_build              | build + install libqtbus and libqtbus-nats (build/, _install/), as scripts/quickstart.sh does"
  "library        | build       | do_library_checks     | library checks: exports, no Foundation, NEEDED and RUNPATH, header hygiene, demo (ctest in build/)"
  "abi            | build       | do_abi_check          | ABI check: abidiff against abi/ (scripts/abi-check.sh)"
  "probes         | build       | do_probes             | USDT probes fire with their arguments, under gdb (scripts/probes-test.sh)"
  "pkgconfig      | build       | do_pkgconfig_consumer | pkg-config consumers: examples/demo.c, messaging.c, signals.c, inspect.c, logger.c, demo.cpp, run without LD_LIBRARY_PATH"
  "nats-demo      | build       | do_nats_demo          | NATS examples: two C processes, and examples/nats_demo.cpp (qtbus_nats.hpp), through a local nats-server (scripts/nats-demo.sh)"
  "deployment     | build       | do_deployment         | the example deployment: TLS and two accounts in nats-server.conf, the C examples as two services, the server's refusals (examples/deployment/try.sh)"
  "tracing        | build       | do_tracing            | the tracing example: one W3C trace id from Python (OpenTelemetry) through a C service's queued handler and dispatch back to Python, via nats-server (examples/tracing/run.sh)"
  "cmake          | build       | do_cmake_consumer     | CMake consumer: find_package(qtbus) -> qtbus::qtbus, qtbus::nats (cmake/consumer-test)"
  "c-tests        | build       | do_c_tests            | C tests (CTests/, via pkg-config; the NATS bridge's against nats-servers they start)"
  "cxx-tests      | build       | do_cxx_tests          | C++ tests (CxxTests/, qtbus.hpp; qtbus_nats.hpp against a nats-server it starts): g++ and clang++"
  "oom            | build       | do_oom                | out of memory: each allocation of every call failed in turn, cold and warm (scripts/oom-sweep.sh both)"
  "relocation     | build       | do_relocation         | relocatable install: --prefix, DESTDIR, moved prefix"
  "subproject     | build       | do_subproject         | subproject: FetchContent leaves the parent alone"
  "no-toolchain   | build       | do_no_toolchain       | without a Swift toolchain: demo, messaging, C tests"
  "full-runtime   | -           | do_full_runtime       | full-runtime variant (QTBUS_SWIFT_RUNTIME=static, 0.2.0's library): build checks and the C tests against it installed"
  "shared-runtime | build       | do_shared_runtime     | shared-runtime variant (QTBUS_SWIFT_RUNTIME=shared), and the no-toolchain control"
  "one-engine     | build       | do_one_engine         | one engine per process: C plugin in a Swift program (scripts/one-engine.sh)"
  "package        | build       | do_package            | Debian packages: cpack, lintian, dpkg -i, pkg-config (scripts/package-test.sh)"
  "bench-smoke    | -           | do_bench_smoke        | benchmark smoke (scripts/bench.sh --smoke)"
  "swift-build    | -           | do_swift_build        | swift build"
  "swift-test     | swift-build | do_swift_test         | swift test (QTEventBusNATSTests: against nats-servers they start)"
  "swift-nats     | swift-build | do_swift_nats_demo    | Swift NATS example: examples/swift/nats_demo (QTEventBusNATS) through a local nats-server (scripts/nats-demo.sh --swift)"
  "docc           | swift-build | do_docs               | Swift API documentation: DocC, no warnings (scripts/docs.sh)"
  "swift-surface  | swift-build | do_swift_surface      | Swift surface: three products, no public engine symbol (scripts/swift-surface.sh)"
  "spm-consumer   | swift-build | do_swiftpm_consumer   | SwiftPM consumers: by version (from: the version of project()), and by path under another directory name (scripts/swiftpm-consumer-test.sh)"
  "snippets       | installed   | do_readme             | README, DEVELOPERS and docs/ snippets: C compiled and run, Swift type-checked, sh syntax (scripts/readme-snippets.py)"
)

# row ROW: sets id, needs, fn and what from one row of STEPS.
row() {
  local IFS='|'
  read -r id needs fn what <<<"$1"
  id=${id//[[:space:]]/} needs=${needs//[[:space:]]/} fn=${fn//[[:space:]]/}
  what=${what#"${what%%[![:space:]]*}"}
}

declare -A only=() known=()
case "${1:-}" in
  "") ;;
  --list)
    printf '%-15s %-12s %s\n' step needs "what it checks"
    for r in "${STEPS[@]}"; do
      row "$r"
      printf '%-15s %-12s %s\n' "$id" "$needs" "$what"
    done
    exit 0 ;;
  -*) die "usage: scripts/test.sh [--list | STEP...]" ;;
  *)
    for r in "${STEPS[@]}"; do row "$r"; known[$id]=1; done
    for a in "$@"; do
      [ -n "${known[$a]:-}" ] || die "unknown step '$a' (scripts/test.sh --list names them)"
      only[$a]=1
    done ;;
esac

declare -A passed=()
for r in "${STEPS[@]}"; do
  row "$r"
  if [ ${#only[@]} -gt 0 ]; then
    [ -n "${only[$id]:-}" ] || continue
    [ "$needs" = - ] || [ "$needs" = installed ] || [ -n "${only[$needs]:-}" ] || passed[$needs]=1
  fi
  case "$needs" in
    -) ;;
    installed)
      if [ ! -e "$PREFIX/lib/pkgconfig/qtbus.pc" ]; then skip "$what" "no installed library"; continue; fi ;;
    *)
      if [ -z "${passed[$needs]:-}" ]; then skip "$what" "$needs failed"; continue; fi ;;
  esac
  step "$what" "$fn"
  if [ "$last" -eq 0 ]; then
    passed[$id]=1
  elif [ "$id" = deps ]; then
    printf '  %s\n' "${results[@]}"
    exit 1
  fi
done

summary scripts/test.sh
