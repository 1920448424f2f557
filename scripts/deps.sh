#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what the build and test scripts need and a fresh Debian/Ubuntu machine with
# only swift, gcc, python3 and git lacks: cmake (>= 3.25), ninja, pkg-config, valgrind,
# libc6-dbg, binutils, libffi-dev, systemtap-sdt-dev, libnats-dev, nats-server, openssl,
# and from PyPI the Python packages nats-py and nkeys.  Installs nothing when everything
# is present; otherwise runs apt-get update once, then apt-get install -y (as root, or
# through sudo -n), and pip for the python3 on PATH.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# Packages for the commands: cmake ninja pkg-config valgrind readelf/nm; libc6-dbg gives
# valgrind glibc's symbols (readable stacks, and the frames scripts/valgrind.supp names);
# libffi-dev for the typed signals (libffi.pc, ffi.h, and libffi_pic.a, linked into
# libqtbus.so); systemtap-sdt-dev for the USDT probes (<sys/sdt.h>: macros only, no
# library); libnats-dev (nats.c) for libqtbus-nats, and nats-server, which its tests
# start themselves; openssl, with which test_nats_secure makes its CA and certificates.
apt_install deps cmake ninja-build pkg-config valgrind binutils libc6-dbg libffi-dev systemtap-sdt-dev \
  libnats-dev nats-server openssl

# Python packages of the bridge's tests, for the python3 on PATH (the one the tests
# run): nkeys (test_nats_secure makes an NKey pair with it) and nats-py (a plain NATS
# client).  Checked from / so that the source tree's nats/ directory is not taken for
# the nats package.  A python3 whose installation is Debian's own (EXTERNALLY-MANAGED,
# PEP 668) gets them with --break-system-packages: these two packages shadow nothing
# Debian ships.
py_modules() { (cd / && python3 -c 'import nkeys, nats.aio.client' 2>/dev/null); }
if ! py_modules; then
  echo "deps: installing the Python packages nats-py nkeys (pip)"
  (cd / && python3 -m pip --version >/dev/null 2>&1) || apt_install deps python3-pip
  pip_args=(install --quiet --disable-pip-version-check --root-user-action=ignore)
  if (cd / && python3 -c 'import os, sys, sysconfig
sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'); then
    pip_args+=(--break-system-packages)
  fi
  (cd / && python3 -m pip "${pip_args[@]}" nats-py nkeys </dev/null)
  py_modules || { echo "deps: python3 still cannot import nkeys and nats after pip install" >&2; exit 1; }
fi

for tool in swift swiftc cc python3; do
  command -v "$tool" >/dev/null 2>&1 || { echo "deps: $tool not found on PATH" >&2; exit 1; }
done
cmake_version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')
if ! printf '3.25\n%s\n' "$cmake_version" | sort -V -C; then
  echo "deps: cmake $cmake_version is too old (need >= 3.25)" >&2
  exit 1
fi
echo "deps: ok (cmake $cmake_version, $(ninja --version 2>/dev/null | sed 's/^/ninja /'), $(swiftc --version 2>/dev/null | head -1), $(cd / && python3 -c 'import importlib.metadata as m; print("nats-py", m.version("nats-py"), "nkeys", m.version("nkeys"))'))"
