#!/usr/bin/env bash
# The Debian packages, built, checked, linted, installed and used:
#   1. configures build/package for /usr (multiarch libdir), builds, `cpack -G DEB`;
#   2. prints each package's `dpkg-deb -I` and `-c`, checks what is where (the library,
#      0644 and stripped, alone in libqtbus0 with its shlibs file; every header of
#      include/, the namelink, qtbus.pc and the CMake package in libqtbus-dev, which
#      depends on exactly this libqtbus0), and runs lintian (errors fail, the rest is
#      printed);
#   3. as root: installs both with `dpkg -i` (refusing if a libqtbus0 or libqtbus-dev it
#      did not install is there; one run at a time on the machine) and purges them at
#      the end, also on failure; otherwise extracts them with `dpkg-deb -x` into a
#      temporary root (QTBUS_PACKAGE_TEST_EXTRACT=1 asks for that as root too);
#   4. builds examples/demo.c with `pkg-config --cflags --libs qtbus` alone and runs it;
#      after dpkg -i also cmake/consumer-test with find_package(qtbus) and no prefix path.
# Installs what it uses and a fresh Debian machine with a Swift toolchain lacks (as root
# or through sudo -n).
# usage: scripts/package-test.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

# cmake, ninja, pkg-config, readelf; dpkg-shlibdeps (dpkg-dev); lintian; file.
apt_install package-test cmake ninja-build pkg-config binutils dpkg-dev lintian file

dir=$ROOT/build/package
log "build and package (cpack -G DEB in $dir)"
fresh_if_not_ninja "$dir"
cmake -G Ninja -S "$ROOT" -B "$dir" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=Release \
  -DQTBUS_BUILD_TESTS=OFF >/dev/null
cmake --build "$dir"
rm -f "$dir"/*.deb
(cd "$dir" && cpack -G DEB)
runtime=$(ls "$dir"/libqtbus0_*.deb)
dev=$(ls "$dir"/libqtbus-dev_*.deb)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=usr/lib/$multiarch

log "the packages"
for deb in "$runtime" "$dev"; do
  echo "--- dpkg-deb -I $(basename "$deb")"
  dpkg-deb -I "$deb"
  echo "--- dpkg-deb -c $(basename "$deb")"
  dpkg-deb -c "$deb"
done

log "what is where"
work=$(mktemp -d)
installed=0
cleanup() {
  local status=$?
  if [ "$installed" = 1 ]; then
    echo "purging libqtbus-dev libqtbus0"
    if ! dpkg --purge libqtbus-dev libqtbus0 >/dev/null; then
      echo "package-test: dpkg --purge libqtbus-dev libqtbus0 failed; they may still be installed" >&2
      status=1
    fi
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

# entry DEB PATH: the `dpkg-deb -c` line of ./PATH ("mode owner size date time path").
entry() { dpkg-deb -c "$1" | awk -v p="./$2" '$6 == p'; }
# expect DEB PATH [MODE]: PATH is in DEB (with ls-style MODE, when given).
expect() {
  local line
  line=$(entry "$1" "$2")
  [ -n "$line" ] || die "$(basename "$1") lacks /$2"
  [ -z "${3:-}" ] || [ "${line%% *}" = "$3" ] || die "$(basename "$1"): /$2 is ${line%% *}, not $3"
}
# absent DEB PATTERN: no path of DEB matches the extended regex PATTERN.  (Listings are
# read into variables before grep: with pipefail, `producer | grep -q` fails or passes
# at random when grep exits at its first match and the producer dies of SIGPIPE.)
absent() {
  local matches
  matches=$(dpkg-deb -c "$1" | awk '{print $6}' | { grep -E "$2" || true; })
  [ -z "$matches" ] || die "$(basename "$1") has files matching $2: ${matches//$'\n'/ }"
}
version=$(dpkg-deb -f "$runtime" Version)
soname=$(readelf -d "$dir/libqtbus.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libqtbus.so.0 ] && [ "$(dpkg-deb -f "$runtime" Package)" = libqtbus0 ] \
  || die "SONAME $soname, package $(dpkg-deb -f "$runtime" Package): the name should follow the SONAME"
for deb in "$runtime" "$dev"; do
  others=$(dpkg-deb -c "$deb" | awk '$2 != "root/root" {print $6}')
  [ -z "$others" ] || die "$(basename "$deb"): not owned by root: $others"
done
expect "$runtime" "$libdir/libqtbus.so.0.1.0" -rw-r--r--
expect "$runtime" "$libdir/libqtbus.so.0" lrwxrwxrwx
absent "$runtime" '^\./usr/include/|\.pc$|/cmake/|/libqtbus\.so$'
dpkg-deb -x "$runtime" "$work/runtime"
kind=$(file -b "$work/runtime/$libdir/libqtbus.so.0.1.0")
case $kind in *", stripped"*) ;; *) die "libqtbus.so.0.1.0 is not stripped: $kind" ;; esac
dpkg-deb -e "$runtime" "$work/runtime-control"
[ -s "$work/runtime-control/shlibs" ] || die "libqtbus0 has no shlibs file"
echo "shlibs: $(cat "$work/runtime-control/shlibs")"
[ "$(dpkg-deb -f "$dev" Depends)" = "libqtbus0 (= $version)" ] \
  || die "libqtbus-dev Depends: $(dpkg-deb -f "$dev" Depends), not libqtbus0 (= $version)"
for header in include/*; do expect "$dev" "usr/$header" -rw-r--r--; done
expect "$dev" "$libdir/libqtbus.so" lrwxrwxrwx
expect "$dev" "$libdir/pkgconfig/qtbus.pc" -rw-r--r--
for f in qtbusConfig.cmake qtbusConfigVersion.cmake qtbusTargets.cmake; do
  expect "$dev" "$libdir/cmake/qtbus/$f" -rw-r--r--
done
absent "$dev" '/libqtbus\.so\.'
expect "$runtime" usr/share/doc/libqtbus0/copyright -rw-r--r--
expect "$dev" usr/share/doc/libqtbus-dev/copyright -rw-r--r--
echo "ok: libqtbus0 $version holds $libdir/libqtbus.so.0{,.1.0} (0644, stripped, shlibs);" \
  "libqtbus-dev holds $(cd include && echo *), the namelink, qtbus.pc, the CMake package"

log "lintian"
# Errors fail the step; warnings and the informational tags are printed.
lintian --fail-on error --display-level '>=pedantic' --allow-root "$runtime" "$dev"

# loads_from PROGRAM DIR: the loader finds PROGRAM's libqtbus.so.0 in DIR (/lib and
# /usr/lib are one directory on a merged-/usr system, hence readlink).
loads_from() {
  local found
  found=$(ldd "$1" | awk '$1 == "libqtbus.so.0" {print $3}')
  [ -n "$found" ] && [ "$(readlink -f "$found")" = "$(readlink -f "$2/libqtbus.so.0")" ] \
    || die "$(basename "$1") loads libqtbus.so.0 from '$found', not $2"
  echo "$(basename "$1") loads $found"
}

unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR PKG_CONFIG_SYSROOT_DIR LD_LIBRARY_PATH CMAKE_PREFIX_PATH
if [ "$(id -u)" -eq 0 ] && [ -z "${QTBUS_PACKAGE_TEST_EXTRACT:-}" ]; then
  log "dpkg -i"
  # One run at a time on this machine (other worktrees run it too): the check below and
  # the purge at the end must see this run's packages only.
  lock=/run/lock/qtbus-package-test.lock
  [ -d /run/lock ] || lock=/tmp/qtbus-package-test.lock
  exec 9>"$lock"
  if ! flock -n 9; then
    echo "waiting for another scripts/package-test.sh to finish ($lock)"
    flock -w 900 9 || die "another scripts/package-test.sh still holds $lock"
  fi
  if dpkg -s libqtbus0 >/dev/null 2>&1 || dpkg -s libqtbus-dev >/dev/null 2>&1; then
    die "a libqtbus0 or libqtbus-dev is already installed; not replacing it (dpkg --purge them first)"
  fi
  installed=1
  dpkg -i "$runtime" "$dev"
  flags=$(pkg-config --cflags --libs qtbus)
  echo "pkg-config --cflags --libs qtbus = '$flags'"
  case $flags in *rpath*|*-L*|*-I*) die "the /usr qtbus.pc should give just -lqtbus" ;; esac
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror examples/demo.c $flags -o "$work/demo"
  echo "demo needs: $(readelf -d "$work/demo" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  loads_from "$work/demo" "/$libdir"
  "$work/demo" | tail -1
  cmake -G Ninja -S cmake/consumer-test -B "$work/consumer" >/dev/null
  cmake --build "$work/consumer" >/dev/null
  found=$(sed -n 's/^qtbus_DIR:PATH=//p' "$work/consumer/CMakeCache.txt")
  echo "find_package(qtbus): $found"
  [ "$found" = "/$libdir/cmake/qtbus" ] || die "find_package(qtbus) found $found, not the package's"
  "$work/consumer/consumer"
else
  log "dpkg-deb -x into a temporary root (no dpkg -i)"
  root=$work/root
  dpkg-deb -x "$runtime" "$root"
  dpkg-deb -x "$dev" "$root"
  export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig
  flags=$(pkg-config --cflags --libs qtbus)
  echo "pkg-config --cflags --libs qtbus = '$flags'"
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror examples/demo.c $flags -o "$work/demo"
  LD_LIBRARY_PATH=$root/$libdir loads_from "$work/demo" "$root/$libdir"
  LD_LIBRARY_PATH=$root/$libdir "$work/demo" | tail -1
fi
echo "package-test: libqtbus0 and libqtbus-dev built, checked, linted, installed and used"
