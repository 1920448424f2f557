#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The fuzzer (docs/operations.md, "Reliability"): Tests/Fuzz/fuzz_api.c, a libFuzzer
# harness over the C ABI, built with the Swift toolchain's clang
# (-fsanitize=fuzzer,address,undefined) against an AddressSanitizer build of libqtbus (the shipped, Embedded Swift library:
# no Swift runtime inside) with libFuzzer's coverage instrumentation
# (swiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp, and
# -fsanitize=fuzzer-no-link for the C glue) in build-fuzz/lib, so that the fuzzer is
# guided by the library's edges, not only the harness's; run on a copy of the
# committed corpus, Tests/Fuzz/corpus.tar.gz (the hand-written seeds and regression
# inputs by name, and the inputs merged from the runs so far by their SHA-1: refresh it
# with -merge=1, as docs/operations.md says).
#
#   scripts/fuzz.sh [SECONDS]      (default 60)
#
# Prints libFuzzer's summary (executions, coverage) and fails on any finding; the
# crashing input is left in build-fuzz/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

seconds=${1:-60}
SWIFT_BIN=$(swift_bin_dir)
CLANG=$SWIFT_BIN/clang
out=$ROOT/build-fuzz
dir=$out
build_install "$dir/lib" "$dir/_install" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQTBUS_BUILD_TESTS=OFF \
  -DCMAKE_C_COMPILER="$CLANG" -DQTBUS_SANITIZE=address \
  "-DCMAKE_Swift_FLAGS=-sanitize=address -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp" \
  -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link
# The shipped library's build (Embedded Swift, no Swift runtime), instrumented.
bash "$ROOT/scripts/check-library.sh" "$dir/_install/lib/libqtbus.so" "$ROOT/include/qtbus.h" embedded

mkdir -p "$out/corpus"
# Extracting over a corpus grown by earlier runs adds nothing twice: libFuzzer names
# what it adds by its SHA-1, and the seeds keep their names.
tar -xzf Tests/Fuzz/corpus.tar.gz -C "$out/corpus"
# shellcheck disable=SC2046
"$CLANG" -g -O1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -fuse-ld=lld \
  Tests/Fuzz/fuzz_api.c -o "$out/fuzz_api" \
  $(PKG_CONFIG_PATH="$dir/_install/lib/pkgconfig" pkg-config --cflags --libs qtbus)
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
log "fuzz: $seconds s on build-fuzz/corpus ($(ls "$out/corpus" | wc -l) inputs)"
env -u LD_LIBRARY_PATH "$out/fuzz_api" "$out/corpus" -max_total_time="$seconds" -max_len=512 \
  -timeout=10 -print_final_stats=1 -artifact_prefix="$out/" 2>&1 | grep -v '^#[0-9]*\s*\(NEW\|REDUCE\|pulse\)'
