#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages, built, checked, linted, installed and used:
#   1. configures build/package for /usr (multiarch libdir), builds, `cpack -G DEB`:
#      libqtbus0 and libqtbus-dev, and libqtbus-nats0 and libqtbus-nats-dev;
#   2. prints each package's `dpkg-deb -I` and `-c`, checks what is where (the library,
#      0644 and stripped, alone in libqtbus0 with its shlibs file; qtbus.h, qtbus.hpp, qtbus_signal.hpp,
#      the namelink, qtbus.pc and the CMake package in libqtbus-dev, which depends on
#      exactly this libqtbus0; the bridge's qtbus_nats.h and qtbus_nats.hpp in
#      libqtbus-nats-dev), checks the control fields (Installed-Size as dpkg-gencontrol
#      counts the files, a Maintainer that is not a placeholder, Homepage, Multi-Arch:
#      same for the runtime packages) and the copyright file (DEP-5, the same in every
#      package, naming what libqtbus.so carries), and runs lintian: any tag fails but
#      the informational ones listed below with their reasons;
#   3. as root: installs both with `dpkg -i` (refusing if a libqtbus0 or libqtbus-dev it
#      did not install is there; one run at a time on the machine) and purges them at
#      the end, also on failure; otherwise extracts them with `dpkg-deb -x` into a
#      temporary root (QTBUS_PACKAGE_TEST_EXTRACT=1 asks for that as root too);
#   4. builds examples/demo.c with `pkg-config --cflags --libs qtbus` alone and runs it,
#      and examples/nats_publisher.c with `pkg-config --cflags --libs qtbus-nats`; after
#      dpkg -i also cmake/consumer-test with find_package(qtbus COMPONENTS nats) and no
#      prefix path.
# Installs what it uses and a fresh Debian machine with a Swift toolchain lacks (as root
# or through sudo -n).
# usage: scripts/package-test.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$ROOT"

# cmake, ninja, pkg-config, readelf; dpkg-shlibdeps (dpkg-dev); lintian; file; nats.c
# (libqtbus-nats0 depends on it).
apt_install package-test cmake ninja-build pkg-config binutils dpkg-dev lintian file libnats-dev

dir=$ROOT/build/package
log "build and package (cpack -G DEB in $dir)"
fresh_if_not_ninja "$dir"
cmake -G Ninja -S "$ROOT" -B "$dir" -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=Release \
  -DQTBUS_BUILD_TESTS=OFF -DQTBUS_NATS=ON >/dev/null
cmake --build "$dir"
rm -f "$dir"/*.deb
(cd "$dir" && cpack -G DEB)
runtime=$(ls "$dir"/libqtbus0_*.deb)
dev=$(ls "$dir"/libqtbus-dev_*.deb)
nats_runtime=$(ls "$dir"/libqtbus-nats0_*.deb)
nats_dev=$(ls "$dir"/libqtbus-nats-dev_*.deb)
debs=("$runtime" "$dev" "$nats_runtime" "$nats_dev")
packages="libqtbus-nats-dev libqtbus-nats0 libqtbus-dev libqtbus0"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=usr/lib/$multiarch

log "the packages"
for deb in "${debs[@]}"; do
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
    echo "purging $packages"
    # shellcheck disable=SC2086 # a list of words
    if ! dpkg --purge $packages >/dev/null; then
      echo "package-test: dpkg --purge $packages failed; they may still be installed" >&2
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
for deb in "${debs[@]}"; do
  others=$(dpkg-deb -c "$deb" | awk '$2 != "root/root" {print $6}')
  [ -z "$others" ] || die "$(basename "$deb"): not owned by root: $others"
done
expect "$runtime" "$libdir/libqtbus.so.${version%-*}" -rw-r--r--
expect "$runtime" "$libdir/libqtbus.so.0" lrwxrwxrwx
absent "$runtime" '^\./usr/include/|\.pc$|/cmake/|/libqtbus\.so$'
dpkg-deb -x "$runtime" "$work/runtime"
kind=$(file -b "$work/runtime/$libdir/libqtbus.so.${version%-*}")
case $kind in *", stripped"*) ;; *) die "libqtbus.so.${version%-*} is not stripped: $kind" ;; esac
dpkg-deb -e "$runtime" "$work/runtime-control"
[ -s "$work/runtime-control/shlibs" ] || die "libqtbus0 has no shlibs file"
echo "shlibs: $(cat "$work/runtime-control/shlibs")"
[ "$(dpkg-deb -f "$dev" Depends)" = "libqtbus0 (= $version)" ] \
  || die "libqtbus-dev Depends: $(dpkg-deb -f "$dev" Depends), not libqtbus0 (= $version)"
for header in include/qtbus.h include/qtbus.hpp include/qtbus_signal.hpp; do expect "$dev" "usr/$header" -rw-r--r--; done
absent "$dev" 'qtbus_nats|qtbus-nats|Nats'
expect "$dev" "$libdir/libqtbus.so" lrwxrwxrwx
expect "$dev" "$libdir/pkgconfig/qtbus.pc" -rw-r--r--
for f in qtbusConfig.cmake qtbusConfigVersion.cmake qtbusTargets.cmake; do
  expect "$dev" "$libdir/cmake/qtbus/$f" -rw-r--r--
done
absent "$dev" '/libqtbus\.so\.'
expect "$runtime" usr/share/doc/libqtbus0/copyright -rw-r--r--
expect "$dev" usr/share/doc/libqtbus-dev/copyright -rw-r--r--
echo "ok: libqtbus0 $version holds $libdir/libqtbus.so.{0,${version%-*}} (0644, stripped, shlibs);" \
  "libqtbus-dev holds qtbus.h, qtbus.hpp, qtbus_signal.hpp, the namelink, qtbus.pc, the CMake package"

# The bridge: its library alone in libqtbus-nats0 (depending on this libqtbus0 and on
# nats.c), its development files in libqtbus-nats-dev.
expect "$nats_runtime" "$libdir/libqtbus-nats.so.${version%-*}" -rw-r--r--
expect "$nats_runtime" "$libdir/libqtbus-nats.so.0" lrwxrwxrwx
absent "$nats_runtime" '^\./usr/include/|\.pc$|/cmake/|\.so$'
nats_depends=$(dpkg-deb -f "$nats_runtime" Depends)
case $nats_depends in
  *"libqtbus0 (= $version)"*libnats*|*libnats*"libqtbus0 (= $version)"*) ;;
  *) die "libqtbus-nats0 Depends: $nats_depends (wants libqtbus0 (= $version) and nats.c's library)" ;;
esac
dpkg-deb -e "$nats_runtime" "$work/nats-control"
[ -s "$work/nats-control/shlibs" ] || die "libqtbus-nats0 has no shlibs file"
[ "$(dpkg-deb -f "$nats_dev" Depends)" = "libqtbus-nats0 (= $version), libqtbus-dev (= $version), libnats-dev" ] \
  || die "libqtbus-nats-dev Depends: $(dpkg-deb -f "$nats_dev" Depends)"
expect "$nats_dev" usr/include/qtbus_nats.h -rw-r--r--
expect "$nats_dev" usr/include/qtbus_nats.hpp -rw-r--r--
expect "$nats_dev" "$libdir/libqtbus-nats.so" lrwxrwxrwx
expect "$nats_dev" "$libdir/pkgconfig/qtbus-nats.pc" -rw-r--r--
expect "$nats_dev" "$libdir/cmake/qtbus/qtbusNatsTargets.cmake" -rw-r--r--
expect "$nats_runtime" usr/share/doc/libqtbus-nats0/copyright -rw-r--r--
expect "$nats_dev" usr/share/doc/libqtbus-nats-dev/copyright -rw-r--r--
echo "ok: libqtbus-nats0 holds libqtbus-nats.so.{0,${version%-*}}, Depends: $nats_depends;" \
  "libqtbus-nats-dev holds qtbus_nats.h, qtbus_nats.hpp, the namelink, qtbus-nats.pc, qtbus::nats"

log "control fields and copyright"
# kib_files DIR: the apparent size of DIR's files and symlinks, in KiB (rounded up).
kib_files() { find "$1" -mindepth 1 ! -type d -printf '%s\n' | awk '{b += $1} END {print int((b + 1023) / 1024)}'; }
# kib_dpkg DIR: Installed-Size as dpkg-gencontrol computes it: each file and symlink its
# size rounded up to KiB, each directory 1 KiB.
kib_dpkg() {
  find "$1" -mindepth 1 \( -type d -printf '1024\n' -o -printf '%s\n' \) \
    | awk '{k += int(($1 + 1023) / 1024)} END {print k}'
}
first_copyright=
for deb in "${debs[@]}"; do
  package=$(dpkg-deb -f "$deb" Package)
  tree=$work/fields/$package
  mkdir -p "$tree"
  dpkg-deb -x "$deb" "$tree"
  size=$(dpkg-deb -f "$deb" Installed-Size)
  files=$(kib_files "$tree")
  entries=$(find "$tree" -mindepth 1 | wc -l)
  expected=$(kib_dpkg "$tree")
  echo "$package: Installed-Size $size KiB; its files $files KiB, $entries entries (du -sk --apparent-size, directories too: $(du -sk --apparent-size "$tree" | cut -f1))"
  # Before 0.3.0 CPack counted the library twice, through its SONAME symlink.
  [ "$size" = "$expected" ] || die "$package: Installed-Size $size, not the $expected KiB dpkg-gencontrol would count"
  [ "$size" -ge "$files" ] && [ "$size" -le $((files + entries)) ] \
    || die "$package: Installed-Size $size is not within $entries KiB of its files' $files KiB"
  maintainer=$(dpkg-deb -f "$deb" Maintainer)
  case $maintainer in
    *example.org*|*example.com*|*example.net*|*localhost*|*@invalid*|*"<>"*|"") die "$package: Maintainer is a placeholder: '$maintainer'" ;;
    *" <"*@*.*">") ;;
    *) die "$package: Maintainer '$maintainer' is not 'Name <address>'" ;;
  esac
  homepage=$(dpkg-deb -f "$deb" Homepage)
  case $homepage in https://?*.?*) ;; *) die "$package: Homepage '$homepage' is not an https URL" ;; esac
  multiarch_field=$(dpkg-deb -f "$deb" Multi-Arch)
  case $package in
    libqtbus0|libqtbus-nats0)
      [ "$multiarch_field" = same ] || die "$package: Multi-Arch '$multiarch_field', not same"
      # Multi-Arch: same needs every file outside the multiarch libdir to be the same on
      # each architecture: here none depends on it but the libdir's.
      outside=$(cd "$tree" && find . ! -type d | grep -v "^\./$libdir/" | grep -v '^\./usr/share/' || true)
      [ -z "$outside" ] || die "$package: files outside /$libdir and /usr/share: $outside" ;;
  esac
  copyright=$tree/usr/share/doc/$package/copyright
  [ "$(head -1 "$copyright")" = 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' ] \
    || die "$package: the copyright file is not DEP-5 (machine-readable)"
  for name in 'Upstream-Name: qtbus' libffi libdispatch BlocksRuntime 'Swift standard library' \
      'License: Expat' 'License: Apache-2.0 with Swift exception' /usr/share/common-licenses/Apache-2.0; do
    grep -qF "$name" "$copyright" || die "$package: the copyright file does not name $name"
  done
  if [ -z "$first_copyright" ]; then
    first_copyright=$copyright
  else
    cmp -s "$first_copyright" "$copyright" || die "$package: its copyright file differs from $(basename "$(dirname "$first_copyright")")'s"
  fi
  echo "$package: Maintainer: $maintainer; Homepage: $homepage; Multi-Arch: ${multiarch_field:-(none)}; copyright names libffi, libdispatch, BlocksRuntime, the Swift standard library"
done

log "symbols files"
# Each runtime package's DEBIAN/symbols (from the version scripts) is exactly what its
# library exports, each function under its version node: dpkg-gensymbols compares the
# two and fails (-c4) on any symbol missing from either side.
for pair in "$runtime:libqtbus0:libqtbus" "$nats_runtime:libqtbus-nats0:libqtbus-nats"; do
  IFS=: read -r deb package lib <<<"$pair"
  tree=$work/symbols-$package
  rm -rf "$tree"
  dpkg-deb --raw-extract "$deb" "$tree"
  [ -f "$tree/DEBIAN/symbols" ] || die "$package has no symbols file"
  (cd "$tree" && dpkg-gensymbols -c4 -q -p"$package" -v"${version%-*}" -P"$tree" -I"$tree/DEBIAN/symbols" \
     -e"$tree/usr/lib/$multiarch/$lib.so.${version%-*}" -O/dev/null) \
    || die "$package: DEBIAN/symbols does not match the library's exports"
  echo "$package: DEBIAN/symbols lists the $(grep -c '^ [a-z]' "$tree/DEBIAN/symbols") functions it exports, each with its version node ($(grep -o '^ [A-Z_0-9.]*@' "$tree/DEBIAN/symbols" | tr -d ' @' | tr '\n' ' '))"
done

log "lintian"
# Every tag fails the step (errors, warnings, informational, pedantic, experimental)
# but these informational ones, each true of the packages, for the reason given.  The
# tags that do not apply to a package built by CPack are overridden in the packages
# themselves (cmake/qtbus_package.cmake), each with its reason.
tolerated=(
  # Lazily bound, as Debian's default build flags (dpkg-buildflags) leave a library.
  "I: libqtbus0: hardening-no-bindnow [usr/lib/$multiarch/libqtbus.so.${version%-*}]"
  # The unfortified calls are libdispatch's, linked in from the Swift toolchain's archive.
  "I: libqtbus0: hardening-no-fortify-functions [usr/lib/$multiarch/libqtbus.so.${version%-*}]"
)
# --fail-on none: the status says whether lintian itself ran; the tags are judged here.
lintian_out=$(lintian -E --display-level '>=pedantic' --fail-on none --allow-root "${debs[@]}") \
  || die "lintian failed to run"
printf '%s\n' "$lintian_out"
unexpected=$(printf '%s\n' "$lintian_out" | grep -vxF -f <(printf '%s\n' "${tolerated[@]}") | grep -v '^$' || true)
[ -z "$unexpected" ] || die "lintian: tags that are not tolerated (see the list in package-test.sh): ${unexpected//$'\n'/; }"
echo "lintian: nothing but the ${#tolerated[@]} informational tags tolerated, each for its reason"

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
  for p in $packages; do
    if dpkg -s "$p" >/dev/null 2>&1; then
      die "$p is already installed; not replacing it (dpkg --purge $packages first)"
    fi
  done
  installed=1
  dpkg -i "${debs[@]}"
  flags=$(pkg-config --cflags --libs qtbus)
  echo "pkg-config --cflags --libs qtbus = '$flags'"
  case $flags in *rpath*|*-L*|*-I*) die "the /usr qtbus.pc should give just -lqtbus" ;; esac
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror examples/demo.c $flags -o "$work/demo"
  echo "demo needs: $(readelf -d "$work/demo" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  loads_from "$work/demo" "/$libdir"
  "$work/demo" | tail -1
  nats_flags=$(pkg-config --cflags --libs qtbus-nats)
  echo "pkg-config --cflags --libs qtbus-nats = '$nats_flags'"
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror examples/nats_publisher.c $nats_flags -o "$work/nats_publisher"
  echo "nats_publisher needs: $(readelf -d "$work/nats_publisher" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  # No server on port 1: it must load, run and say so.
  if out=$("$work/nats_publisher" nats://127.0.0.1:1 2>&1); then die "nats_publisher succeeded with no server"; fi
  echo "nats_publisher without a server: $out"
  case $out in *"no server at nats://127.0.0.1:1"*) ;; *) die "nats_publisher did not run as expected" ;; esac
  cmake -G Ninja -S cmake/consumer-test -B "$work/consumer" -DREQUIRE_NATS=ON >/dev/null
  cmake --build "$work/consumer" >/dev/null
  found=$(sed -n 's/^qtbus_DIR:PATH=//p' "$work/consumer/CMakeCache.txt")
  echo "find_package(qtbus): $found"
  [ "$found" = "/$libdir/cmake/qtbus" ] || die "find_package(qtbus) found $found, not the package's"
  "$work/consumer/consumer"
  "$work/consumer/consumer-nats"
  "$work/consumer/consumer-nats-cxx"
else
  log "dpkg-deb -x into a temporary root (no dpkg -i)"
  root=$work/root
  for deb in "${debs[@]}"; do dpkg-deb -x "$deb" "$root"; done
  export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig
  flags=$(pkg-config --cflags --libs qtbus)
  echo "pkg-config --cflags --libs qtbus = '$flags'"
  # shellcheck disable=SC2086 # a list of words
  ${CC:-cc} -std=c11 -Wall -Wextra -Werror examples/demo.c $flags -o "$work/demo"
  LD_LIBRARY_PATH=$root/$libdir loads_from "$work/demo" "$root/$libdir"
  LD_LIBRARY_PATH=$root/$libdir "$work/demo" | tail -1
fi
echo "package-test: libqtbus0, libqtbus-dev, libqtbus-nats0 and libqtbus-nats-dev built, checked, linted, installed and used"
