#!/usr/bin/env bash
# The test command.  From any directory:  scripts/test.sh
#
#   1. builds and installs libqtbus and libqtbus-nats (build/, _install/), as
#      scripts/quickstart.sh does;
#      (before that: the engine's layers, scripts/layers.py: calls go down but for the
#      named hooks, and the README's drawing is the tree's);
#   2. checks the library: exports == qtbus.h, no Foundation, NEEDED and RUNPATH, header
#      hygiene, the demo (ctest in build/); and its ABI against the committed baseline
#      (scripts/abi-check.sh, abidiff); its USDT probes, fired under gdb
#      (scripts/probes-test.sh);
#   3. pkg-config consumers: examples/demo.c, messaging.c, signals.c, inspect.c and demo.cpp
#      built with only `pkg-config --cflags --libs qtbus`, run without LD_LIBRARY_PATH;
#   4. the NATS example (scripts/nats-demo.sh: examples/nats_publisher.c and
#      nats_subscriber.c, two processes through a nats-server it starts); a CMake
#      consumer: cmake/consumer-test, find_package(qtbus) -> qtbus::qtbus;
#   5. the C tests (CTests/, against the installed library through pkg-config; the NATS
#      bridge's against nats-servers they start and stop themselves); the
#      out-of-memory sweep (scripts/oom-sweep.sh warm: every run must be clean); the C++
#      tests (CxxTests/, qtbus.hpp) built with g++ and with clang++;
#   6. the installed files after --prefix, DESTDIR and a moved prefix; qtbus as a
#      FetchContent subproject;
#   7. the demo, messaging.c and the C tests again with the Swift toolchain hidden;
#      the shared-runtime variant (QTBUS_STATIC_SWIFT_RUNTIME=OFF) built and checked,
#      and shown NOT to start without the toolchain (the control of 7);
#   8. one engine per process: a C plugin linking the installed libqtbus, dlopen()ed by
#      a SwiftPM program, shares its qtbus_shared() (scripts/one-engine.sh);
#   9. the Debian packages: cpack, lintian, dpkg -i, a program built with pkg-config
#      alone (scripts/package-test.sh);
#  10. swift build + swift test (Package.swift, Tests/); the DocC archives of both
#      products with no warning (scripts/docs.sh); what another package can reach
#      (scripts/swift-surface.sh);
#  11. the README's code blocks (scripts/readme-snippets.py): complete C programs built
#      with pkg-config and run, C fragments compiled, Swift type-checked against the
#      modules of 10, shell blocks checked with bash -n (the pkg-config one run).
# Every step runs even when an earlier independent one failed; the summary at the end
# lists them all, and the exit status is non-zero if any failed or was skipped.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

BUILD=$ROOT/build
PREFIX=$ROOT/_install
export PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"


do_deps() { bash "$ROOT/scripts/deps.sh"; }
do_layers() { python3 "$ROOT/scripts/layers.py" && python3 "$ROOT/scripts/layers.py" --readme; }
do_build() { build_install "$BUILD" "$PREFIX" -DCMAKE_BUILD_TYPE=Release -DQTBUS_BUILD_TESTS=ON -DQTBUS_NATS=ON; }
do_abi_check() { bash "$ROOT/scripts/abi-check.sh" "$BUILD/libqtbus.so" "$ROOT/include/qtbus.h"; }
do_library_checks() { env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD" --output-on-failure; }
do_probes() { bash "$ROOT/scripts/probes-test.sh" "$PREFIX"; }
do_pkgconfig_consumer() {
  need_cxx
  local flags example
  flags=$(pkg-config --cflags --libs qtbus)
  # Built into $BUILD/<name> (no-toolchain-test.sh runs $BUILD/demo and $BUILD/messaging again).
  for example in demo messaging signals inspect; do
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
  # qtbus.hpp with both compilers users have: Debian's g++ and the toolchain's clang++.
  need_cxx
  local cxx name
  for cxx in "${CXX:-g++}" "$(swift_bin_dir)/clang++"; do
    name=$(basename "$cxx")
    fresh_if_not_ninja "$BUILD/cxxtests-$name"
    cmake -G Ninja -S "$ROOT/CxxTests" -B "$BUILD/cxxtests-$name" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CXX_COMPILER="$cxx"
    cmake --build "$BUILD/cxxtests-$name"
    env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/cxxtests-$name" --output-on-failure
  done
}
do_nats_demo() { bash "$ROOT/scripts/nats-demo.sh" "$PREFIX"; }
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
    -DCMAKE_PREFIX_PATH="$PREFIX" -DQTBUS_NATS_TESTS=ON
  cmake --build "$BUILD/ctests"
  env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/ctests" --output-on-failure
}
do_relocation() { bash "$ROOT/scripts/relocation-test.sh" "$BUILD"; }
do_subproject() { bash "$ROOT/scripts/subproject-test.sh" "$BUILD/subproject-test"; }
do_no_toolchain() {
  bash "$ROOT/scripts/no-toolchain-test.sh" "$BUILD/demo" -- "$BUILD/messaging" \
    -- ctest --test-dir "$BUILD/ctests" --output-on-failure
}
do_shared_runtime() {
  build_install "$BUILD/shared" "$BUILD/shared-install" -DCMAKE_BUILD_TYPE=Release \
    -DQTBUS_STATIC_SWIFT_RUNTIME=OFF -DQTBUS_BUILD_TESTS=ON
  env -u LD_LIBRARY_PATH ctest --test-dir "$BUILD/shared" --output-on-failure
  # The control: the same demo on this variant needs the toolchain's libswiftCore.so.
  local out
  if out=$(bash "$ROOT/scripts/no-toolchain-test.sh" "$BUILD/shared/qtbus-demo" 2>&1); then
    echo "$out"
    echo "the shared-runtime demo ran with the toolchain hidden: the hiding proves nothing"
    return 1
  fi
  echo "$out" | grep -q "libswiftCore.so: cannot open shared object file" \
    || { echo "$out"; echo "the shared-runtime demo failed for another reason"; return 1; }
  echo "control: the shared-runtime demo does not start without the toolchain (libswiftCore.so: cannot open shared object file), as expected"
}
do_package() { bash "$ROOT/scripts/package-test.sh"; }
do_oom() { bash "$ROOT/scripts/oom-sweep.sh" warm; }
do_one_engine() { bash "$ROOT/scripts/one-engine.sh"; }
do_swift_build() { swift build; }
do_swift_test() { swift test; }
do_docs() { bash "$ROOT/scripts/docs.sh"; }
do_swift_surface() { bash "$ROOT/scripts/swift-surface.sh"; }
do_readme() {
  # Headers of the main-loop fragments (GLib, libuv), so they compile rather than skip.
  apt_install readme-snippets libglib2.0-dev libuv1-dev
  python3 "$ROOT/scripts/readme-snippets.py"
}

step "dependencies (scripts/deps.sh)" do_deps
[ "$last" -eq 0 ] || { printf '  %s\n' "${results[@]}"; exit 1; }

step "engine layers: calls go down but for the hooks, README draws the tree (scripts/layers.py)" do_layers
step "build + install libqtbus and libqtbus-nats (build/, _install/)" do_build
if [ "$last" -eq 0 ]; then
  step "library checks: ABI, RUNPATH, header, demo (ctest in build/)" do_library_checks
  step "ABI check: abidiff against abi/ (scripts/abi-check.sh)" do_abi_check
  step "USDT probes fire with their arguments, under gdb (scripts/probes-test.sh)" do_probes
  step "pkg-config consumers: examples/demo.c, messaging.c, signals.c, inspect.c, demo.cpp" do_pkgconfig_consumer
  step "NATS example: two processes through a local nats-server (scripts/nats-demo.sh)" do_nats_demo
  step "CMake consumer: find_package(qtbus)" do_cmake_consumer
  step "C tests (CTests/, via pkg-config)" do_c_tests
  step "C++ tests (CxxTests/, qtbus.hpp): g++ and clang++" do_cxx_tests
  step "out of memory: each allocation of every call failed in turn (scripts/oom-sweep.sh warm)" do_oom
  step "relocatable install: --prefix, DESTDIR, moved prefix" do_relocation
  step "subproject: FetchContent leaves the parent alone" do_subproject
  step "without a Swift toolchain: demo, messaging, C tests" do_no_toolchain
  step "shared-runtime variant, and the no-toolchain control" do_shared_runtime
  step "one engine per process: C plugin in a Swift program (scripts/one-engine.sh)" do_one_engine
  step "Debian packages: cpack, lintian, dpkg -i, pkg-config (scripts/package-test.sh)" do_package
else
  for s in "library checks" "ABI check" "pkg-config consumer" "CMake consumer" "C tests" \
           "relocatable install" "subproject" "without a Swift toolchain" "shared-runtime variant" \
           "one engine per process" "Debian packages"; do
    skip "$s" "library build failed"
  done
fi

do_bench_smoke() { bash "$ROOT/scripts/bench.sh" --smoke; }
step "benchmark smoke (scripts/bench.sh --smoke)" do_bench_smoke
step "swift build" do_swift_build
if [ "$last" -eq 0 ]; then
  step "swift test" do_swift_test
  step "Swift API documentation: DocC, no warnings (scripts/docs.sh)" do_docs
  step "Swift surface: two products, no public engine symbol (scripts/swift-surface.sh)" do_swift_surface
else
  skip "swift test" "swift build failed"
fi
if [ -e "$PREFIX/lib/pkgconfig/qtbus.pc" ]; then
  step "README snippets: C compiled and run, Swift type-checked, sh syntax (scripts/readme-snippets.py)" do_readme
else
  skip "README snippets" "no installed library"
fi

summary scripts/test.sh
