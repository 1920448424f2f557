#!/usr/bin/env bash
# The Debian packages, built, linted, installed and used:
#   1. configures build/package for /usr (multiarch libdir), builds, `cpack -G DEB`;
#   2. prints each package's control fields and contents, and runs lintian (errors fail);
#   3. as root: installs both with `dpkg -i` (refusing if a libqtbus0 it did not install
#      is there) and purges them at the end, also on failure; otherwise extracts them
#      with `dpkg-deb -x` into a temporary root (QTBUS_PACKAGE_TEST_EXTRACT=1 asks for
#      that as root too);
#   4. builds examples/demo.c with `pkg-config --cflags --libs qtbus` alone and runs it;
#      after dpkg -i also cmake/consumer-test with find_package(qtbus) and no prefix path.
# usage: scripts/package-test.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

apt_install package-test dpkg-dev lintian file

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

log "the packages"
for deb in "$runtime" "$dev"; do
  echo "--- $(basename "$deb")"
  dpkg-deb -f "$deb"
  dpkg-deb -c "$deb" | awk '{print "  " $1, $3, $6, $7, $8}'
done

log "lintian"
# --fail-on error: warnings are printed, errors fail the step.
lintian --fail-on error --display-level '>=pedantic' --allow-root "$runtime" "$dev" \
  | grep -v 'spelling-error-in-binary' || true
lintian --fail-on error --allow-root "$runtime" "$dev" >/dev/null

work=$(mktemp -d)
installed=0
cleanup() {
  if [ "$installed" = 1 ]; then
    echo "purging libqtbus-dev libqtbus0"
    dpkg --purge libqtbus-dev libqtbus0 >/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
unset PKG_CONFIG_PATH LD_LIBRARY_PATH

if [ "$(id -u)" -eq 0 ] && [ -z "${QTBUS_PACKAGE_TEST_EXTRACT:-}" ]; then
  log "dpkg -i"
  if dpkg -s libqtbus0 >/dev/null 2>&1 || dpkg -s libqtbus-dev >/dev/null 2>&1; then
    die "a libqtbus0 or libqtbus-dev is already installed; not replacing it (dpkg --purge them first)"
  fi
  installed=1
  dpkg -i "$runtime" "$dev"
  flags=$(pkg-config --cflags --libs qtbus)
  echo "pkg-config --cflags --libs qtbus = '$flags'"
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror examples/demo.c $flags -o "$work/demo"
  echo "demo needs: $(readelf -d "$work/demo" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  "$work/demo" | tail -1
  cmake -G Ninja -S cmake/consumer-test -B "$work/consumer" >/dev/null
  cmake --build "$work/consumer" >/dev/null
  echo "find_package(qtbus): $(sed -n 's/^qtbus_DIR:PATH=//p' "$work/consumer/CMakeCache.txt")"
  "$work/consumer/consumer"
else
  log "dpkg-deb -x into a temporary root (no dpkg -i)"
  root=$work/root
  dpkg-deb -x "$runtime" "$root"
  dpkg-deb -x "$dev" "$root"
  multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
  export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/$multiarch/pkgconfig
  flags=$(pkg-config --cflags --libs qtbus)
  echo "pkg-config --cflags --libs qtbus = '$flags'"
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror examples/demo.c $flags -o "$work/demo"
  LD_LIBRARY_PATH=$root/usr/lib/$multiarch "$work/demo" | tail -1
fi
echo "package-test: libqtbus0 and libqtbus-dev built, linted, installed and used"
