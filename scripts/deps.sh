#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what the build and test scripts need and a fresh Debian/Ubuntu machine with
# only swift, gcc, python3 and git lacks: cmake (>= 3.25), ninja, pkg-config, valgrind,
# libc6-dbg, binutils, libffi-dev, systemtap-sdt-dev, libnats-dev, nats-server.  Installs nothing when everything is present; otherwise runs
# apt-get update once, then apt-get install -y (as root, or through sudo -n).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Packages for the commands: cmake ninja pkg-config valgrind readelf/nm; libc6-dbg gives
# valgrind glibc's symbols (readable stacks, and the frames scripts/valgrind.supp names);
# libffi-dev for the typed signals (libffi.pc, ffi.h, and libffi_pic.a, linked into
# libqtbus.so); systemtap-sdt-dev for the USDT probes (<sys/sdt.h>: macros only, no
# library); libnats-dev (nats.c) for libqtbus-nats, and nats-server, which its tests
# start themselves.
apt_install deps cmake ninja-build pkg-config valgrind binutils libc6-dbg libffi-dev systemtap-sdt-dev \
  libnats-dev nats-server

for tool in swift swiftc cc python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "deps: $tool not found on PATH" >&2; exit 1; }
done
cmake_version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')
if ! printf '3.25\n%s\n' "$cmake_version" | sort -V -C; then
  echo "deps: cmake $cmake_version is too old (need >= 3.25)" >&2
  exit 1
fi
echo "deps: ok (cmake $cmake_version, $(ninja --version 2>/dev/null | sed 's/^/ninja /'), $(swiftc --version 2>/dev/null | head -1))"
