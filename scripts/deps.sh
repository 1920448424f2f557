#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what a fresh Debian/Ubuntu machine with only swift, gcc, python3 and git lacks:
#   scripts/deps.sh --build  what building and running libqtbus needs (the quick start):
#                            cmake (>= 3.25), ninja, pkg-config, binutils, libffi-dev,
#                            systemtap-sdt-dev;
#   scripts/deps.sh          that, and what the test scripts need: valgrind, libc6-dbg,
#                            libnats-dev, nats-server, openssl, clang-format, and the
#                            Python packages nats-py, nkeys and OpenTelemetry in a virtual
#                            environment under the build tree ($QTBUS_VENV,
#                            scripts/common.sh; python3-venv makes it).
# Installs nothing when everything is present; otherwise runs apt-get update once, then
# apt-get install -y (as root, or through sudo -n), and pip inside the virtual
# environment only: the system's Python is never changed.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_only=0
case ${1:-} in
  --build) build_only=1 ;;
  "") ;;
  *) die "usage: scripts/deps.sh [--build]" ;;
esac

# Building libqtbus: cmake ninja pkg-config; binutils (GNU ld, which the library is
# linked with, and readelf/nm); libffi-dev for the typed signals (libffi.pc, ffi.h, and
# libffi_pic.a, linked into libqtbus.so); systemtap-sdt-dev for the USDT probes
# (<sys/sdt.h>: macros only, no library).  The probes are optional to the build, but a
# build made without the header keeps them out until its files are recompiled, and the
# test command reuses the quick start's build/.
build_packages=(cmake ninja-build pkg-config binutils libffi-dev systemtap-sdt-dev)
# Testing it: valgrind; libc6-dbg gives valgrind glibc's symbols (readable stacks, and the
# frames scripts/valgrind.supp names); libnats-dev (nats.c) for libqtbus-nats, and
# nats-server, which its tests start themselves; openssl, with which test_nats_tls
# makes its CA and certificates; clang-format, Debian's (14 on bookworm), which the format
# step checks the C and C++ with (scripts/format.sh; Swift's swift-format is the
# toolchain's).
test_packages=(valgrind libc6-dbg libnats-dev nats-server openssl clang-format)
if [ "$build_only" = 1 ]; then
  apt_install deps "${build_packages[@]}"
else
  apt_install deps "${build_packages[@]}" "${test_packages[@]}"
fi

tools=(swift swiftc cc)
[ "$build_only" = 1 ] || tools+=(python3)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || { echo "deps: $tool not found on PATH" >&2; exit 1; }
done
cmake_version=$(cmake --version | sed -n 's/^cmake version \([0-9.]*\).*/\1/p')
if ! printf '3.25\n%s\n' "$cmake_version" | sort -V -C; then
  echo "deps: cmake $cmake_version is too old (need >= 3.25)" >&2
  exit 1
fi
versions="cmake $cmake_version, $(ninja --version 2>/dev/null | sed 's/^/ninja /'), $(swiftc --version 2>/dev/null | head -1)"
if [ "$build_only" = 1 ]; then
  echo "deps: ok for building ($versions)"
  exit 0
fi

# The bridge's tests' Python packages, in the virtual environment $QTBUS_VENV:
#   nkeys    test_nats_auth and _credentials make NKey pairs with it;
#   nats-py  test_nats_interop's plain NATS client (CTests/nats/plain_client.py), and
#            test_nats_headers' and examples/tracing's;
#   opentelemetry-api, opentelemetry-sdk  their W3C propagator and trace ids (the same
#            trace at both ends of the bridge).
# A package added here is checked by importing venv_modules.  Python runs from / so that
# the source tree's nats/ directory is not taken for the nats package.
venv_packages=(nats-py nkeys opentelemetry-api opentelemetry-sdk)
venv_modules="nkeys, nats.aio.client, opentelemetry.trace, opentelemetry.sdk.trace"
python=$QTBUS_VENV/bin/python3
venv_ready() { [ -x "$python" ] && (cd / && "$python" -c "import $venv_modules" 2>/dev/null); }
if ! venv_ready; then
  # Debian's python3 makes a virtual environment only with python3-venv (ensurepip).
  (cd / && python3 -c 'import ensurepip' 2>/dev/null) || apt_install deps python3-venv
  venv_args=()
  # One whose interpreter no longer runs (the system's python3 was upgraded) is made anew.
  if [ -e "$python" ] && ! "$python" -c '' 2>/dev/null; then venv_args+=(--clear); fi
  echo "deps: the virtual environment $QTBUS_VENV, with ${venv_packages[*]} (pip)"
  mkdir -p "$(dirname "$QTBUS_VENV")"
  python3 -m venv "${venv_args[@]}" "$QTBUS_VENV"
  (cd / && "$python" -m pip install --quiet --disable-pip-version-check "${venv_packages[@]}" </dev/null)
  venv_ready || { echo "deps: $python still cannot import $venv_modules after pip install" >&2; exit 1; }
fi

echo "deps: ok ($versions, $QTBUS_VENV: $(cd / && "$python" -c 'import importlib.metadata as m; print("nats-py", m.version("nats-py"), "nkeys", m.version("nkeys"))'))"
