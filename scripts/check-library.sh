#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks a built libqtbus.so against include/qtbus.h:
#   - it exports exactly the functions the header declares with QTBUS_API
#     (scripts/check-exports.sh);
#   - it does not link Foundation (readelf -d NEEDED);
#   - embedded (the default, QTBUS_SWIFT_RUNTIME): NEEDED names at most libc, libm and
#     the loader (CONTRACT section 13), there is no RUNPATH, and no symbol of Swift's
#     (swift_*, $s...) is global in any symbol table, nor in .dynsym at all, defined
#     or not: the library neither carries nor needs a Swift runtime; and it needs no
#     static TLS (no STATIC_TLS flag, no TPOFF relocation: dlopen-safe);
#     static runtime: NEEDED names only system libraries (libc, libm, libstdc++,
#     libgcc_s, the loader), and there is no RUNPATH;
#     in both, libffi only when the fourth argument is "shared-libffi"
#     (QTBUS_STATIC_LIBFFI=OFF);
#     shared runtime: RUNPATH holds the directory with libswiftCore.so;
#   - it carries the USDT probes qtbus:dispatch, deliver, subscribe, dispose, release and drop
#     (readelf -n), each with a semaphore;
#   - the header compiles alone as C99, C11 (and C++17 when c++ exists), -Wall -Wextra -pedantic -Werror;
#     qtbus.hpp beside it compiles alone as C++17 and C++20 the same way, and so does
#     qtbus_signal.hpp (included first, it brings in qtbus.hpp).
# usage: scripts/check-library.sh path/to/libqtbus.so path/to/qtbus.h embedded|static|shared [static-libffi|shared-libffi]
set -euo pipefail

lib=${1:?usage: check-library.sh LIB HEADER embedded|static|shared}
header=${2:?usage: check-library.sh LIB HEADER embedded|static|shared}
runtime=${3:?usage: check-library.sh LIB HEADER embedded|static|shared}
libffi=${4:-static-libffi}
fail=0
bad() { echo "check-library: FAIL: $*" >&2; fail=1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

bash "$(dirname "${BASH_SOURCE[0]}")/check-exports.sh" "$lib" "$header" || fail=1

probes=$(readelf -n "$lib" | awk '/Provider: qtbus/ { getline; print $2 }' | sort | tr '\n' ' ')
echo "probes: ${probes:-(none)}"
[ "$probes" = "deliver dispatch dispose drop release subscribe " ] || bad "USDT probes: '$probes' (want deliver dispatch dispose drop release subscribe)"
# (Tools' output is read into a variable before grep -q: with pipefail, `producer |
# grep -q` fails at random when grep exits at its first match and the producer dies of
# SIGPIPE, and a check that then takes the failure for "absent" cannot fail.)
notes=$(readelf -n "$lib")
semaphores=$(grep -A3 "Provider: qtbus" <<<"$notes" || true)
if grep -q "Semaphore: 0x0*$" <<<"$semaphores"; then bad "a USDT probe without a semaphore"; fi

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "needed: $(echo $needed)"
if grep -qi foundation <<<"$needed"; then bad "links Foundation"; fi

runpath=$(readelf -d "$lib" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
echo "runpath: ${runpath:-(none)}"
case $runtime in
  embedded)
    for n in $needed; do
      case $n in
        libc.so.*|libm.so.*|ld-linux*.so.*) ;;
        libffi.so.*) ;;  # checked below
        *) bad "embedded: NEEDED $n (only libc, libm, libffi and the loader may be)" ;;
      esac
    done
    [ -z "$runpath" ] || bad "embedded: unexpected RUNPATH $runpath"
    swift_dyn=$(readelf --dyn-syms -W "$lib" | awk '$1 ~ /^[0-9]+:$/ {print $8}' | grep -E '^(swift_|\$s|_swift)' || true)
    [ -z "$swift_dyn" ] || bad "embedded: Swift symbols in .dynsym: $(echo $swift_dyn | head -c 300)"
    swift_global=$(nm --defined-only "$lib" 2>/dev/null | awk '$2 ~ /^[A-Z]$/ {print $3}' | grep -E '^(swift_|\$s|_swift)' || true)
    [ -z "$swift_global" ] || bad "embedded: global Swift symbols: $(echo $swift_global | head -c 300)"
    # dlopen after start-up (CONTRACT section 14): no initial-exec thread-local, so no
    # static TLS (DF_STATIC_TLS, TPOFF relocations); CTests/test_dlopen.c loads it so.
    # Not for a fuzzing build: -fsanitize-coverage's own __sancov_lowest_stack is
    # initial-exec (scripts/sanitize.sh, fuzz).
    sancov=$(readelf --dyn-syms -W "$lib" | grep -c '__sancov_lowest_stack' || true)
    if [ "$sancov" != 0 ]; then
      echo "tls: not checked (a build with sanitizer coverage, whose runtime's thread-local is initial-exec)"
    else
      dynamic=$(readelf -d "$lib")
      if grep -q STATIC_TLS <<<"$dynamic"; then bad "embedded: FLAGS STATIC_TLS (an initial-exec thread-local: it needs static TLS)"; fi
      tpoff=$(readelf -rW "$lib" | grep -c 'R_X86_64_TPOFF\|R_AARCH64_TLS_TPREL' || true)
      [ "$tpoff" = 0 ] || bad "embedded: $tpoff initial-exec TLS relocations (TPOFF)"
      echo "tls: $(readelf -lW "$lib" | awk '$1 == "TLS" {print $6}') bytes of thread-locals"
    fi
    ;;
  static)
    for n in $needed; do
      case $n in
        libc.so.*|libm.so.*|libstdc++.so.*|libgcc_s.so.*|ld-linux*.so.*|libpthread.so.*|libdl.so.*) ;;
        libffi.so.*) ;;  # checked below
        *) bad "static runtime: NEEDED $n is not a system library" ;;
      esac
    done
    [ -z "$runpath" ] || bad "static runtime: unexpected RUNPATH $runpath"
    ;;
  shared)
    found_swift=0
    IFS=: read -ra dirs <<<"$runpath"
    for d in "${dirs[@]}"; do [ -e "$d/libswiftCore.so" ] && found_swift=1; done
    [ "$found_swift" = 1 ] || bad "shared runtime: no RUNPATH entry holds libswiftCore.so"
    ;;
  *) bad "runtime must be embedded, static or shared, got '$runtime'" ;;
esac
case $libffi in
  static-libffi)
    if grep -q '^libffi' <<<"$needed"; then bad "NEEDED libffi: it should be linked in (QTBUS_STATIC_LIBFFI=ON)"; fi ;;
  shared-libffi)
    grep -q '^libffi\.so' <<<"$needed" || bad "shared-libffi: libffi is not in NEEDED" ;;
  *) bad "libffi must be static-libffi or shared-libffi, got '$libffi'" ;;
esac

cc=${CC:-cc}
for std in c99 c11; do
  printf '#include <qtbus.h>\nint main(void) { return qtbus_version() == 0; }\n' >"$tmp/h.c"
  "$cc" -std=$std -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$(dirname "$header")" "$tmp/h.c" \
    || bad "qtbus.h does not compile cleanly as $std"
done
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
  cp "$tmp/h.c" "$tmp/h.cpp"
  "${CXX:-c++}" -std=c++17 -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$(dirname "$header")" "$tmp/h.cpp" \
    || bad "qtbus.h does not compile cleanly as C++17"
  hpp=$(dirname "$header")/qtbus.hpp
  if [ -f "$hpp" ]; then
    printf '#include <qtbus.hpp>\nint main() { return qtbus::shared().c_bus() == nullptr; }\n' >"$tmp/hpp.cpp"
    # qtbus_signal.hpp, which qtbus.hpp includes at its end, also included first: it
    # must then bring in the whole of qtbus.hpp before its own part.
    printf '#include <qtbus_signal.hpp>\nint main() { return qtbus::signal<void(int32_t)>(qtbus::shared(), "T").arity != 1; }\n' \
      >"$tmp/signal.cpp"
    for std in c++17 c++20; do
      "${CXX:-c++}" -std=$std -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$(dirname "$header")" "$tmp/hpp.cpp" \
        || bad "qtbus.hpp does not compile cleanly as $std"
      "${CXX:-c++}" -std=$std -Wall -Wextra -pedantic -Werror -fsyntax-only -I"$(dirname "$header")" "$tmp/signal.cpp" \
        || bad "qtbus_signal.hpp does not compile cleanly alone as $std"
    done
  else
    bad "no qtbus.hpp beside $header"
  fi
fi

[ "$fail" = 0 ] && echo "check-library: OK ($lib)"
exit "$fail"
