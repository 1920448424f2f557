# SPDX-License-Identifier: MIT
# Shared by the scripts in this directory (sourced, not run).
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ROOT

# The Python virtual environment of the test tools (scripts/deps.sh makes it and
# installs nats-py and nkeys into it), under the build tree: the system's Python gets
# nothing from PyPI.  Everything that runs Python needing them takes
# $QTBUS_VENV/bin/python3; the C tests get it from scripts/test.sh as
# -DQTBUS_PYTHON3=... (CTests/CMakeLists.txt).
QTBUS_VENV=${QTBUS_VENV:-$ROOT/build/venv}
export QTBUS_VENV

if [ -t 1 ]; then
  log() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }
else
  log() { printf '\n==> %s\n' "$*"; }
fi
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The Swift toolchain in use (the one swiftc on PATH belongs to) and its clang, whose
# sanitizer runtimes match the ones Swift's -sanitize= uses.
swift_bin_dir() { dirname "$(readlink -f "$(command -v swiftc)")"; }

# A build directory made by another generator cannot be reconfigured with Ninja:
# start it again rather than fail.  Only CMake's cache and CMakeFiles/ go, which is
# what a change of generator needs: build/ also holds other builds and $QTBUS_VENV.
fresh_if_not_ninja() {
  local dir=$1
  if [ -f "$dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$dir/CMakeCache.txt"; then
    echo "note: $dir was configured with another generator; configuring it again"
    rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"
  fi
}

# build_install BUILD_DIR PREFIX [cmake args...]: configure (Ninja), build and install
# libqtbus.  Re-running only rebuilds what changed.
build_install() {
  local build=$1 prefix=$2
  shift 2
  fresh_if_not_ninja "$build"
  cmake -G Ninja -S "$ROOT" -B "$build" -DCMAKE_INSTALL_PREFIX="$prefix" "$@"
  cmake --build "$build"
  cmake --install "$build"
}

# apt_install WHO PKG...: installs those of the Debian packages PKG that are missing,
# after one apt-get update, as root or through passwordless sudo (WHO prefixes the
# messages).  Does nothing when all are installed.
apt_install() {
  local who=$1 p missing=() as_root=()
  shift
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -gt 0 ] || return 0
  echo "$who: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      as_root=(sudo -n)
    else
      echo "$who: need root (or passwordless sudo) to install: ${missing[*]}" >&2
      return 1
    fi
  fi
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get update -q </dev/null
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends \
    "${missing[@]}" </dev/null
}

# The step runner of test.sh and sanitize.sh.
#   step NAME FUNCTION  runs FUNCTION in a subshell with errexit on, so any failing
#                       command inside fails the step; records PASS/FAIL with its
#                       duration, and its exit status in $last.  Never call it as a
#                       condition (`if step`, `step ||`): bash would then ignore errexit
#                       inside FUNCTION.
#   skip NAME WHY       records a step that could not run (it counts as a failure).
#   summary SCRIPT      prints every step's line; returns 1 if any failed or was skipped.
results=()
failed=0
tails=()
last=0
# A failed step's last lines are repeated after the summary: a long log is often read
# from its end only (CI shows its tail).
step() {
  local name=$1 fn=$2 t0=$SECONDS steplog
  steplog=$(mktemp)
  log "$name"
  set +e
  # Into a file, shown as it grows: a pipe to tee would wait for any process the step
  # left holding its end.
  ( set -e; "$fn" ) > "$steplog" 2>&1 &
  local pid=$!
  # A background job ignores Ctrl-C: pass it on to the step and what it runs.
  trap 'pkill -TERM -P "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null; exit 130' INT TERM
  tail -n +1 -f --pid="$pid" "$steplog"
  wait "$pid"
  last=$?
  trap - INT TERM
  set -e
  if [ "$last" -eq 0 ]; then
    results+=("PASS  $name ($((SECONDS - t0))s)")
  else
    results+=("FAIL  $name ($((SECONDS - t0))s, exit $last)")
    tails+=("--- $name: its last 30 lines ---" "$(tail -n 30 "$steplog")")
    failed=1
  fi
  rm -f "$steplog"
}
skip() { results+=("SKIP  $1 ($2)"); failed=1; }
summary() {
  log "summary"
  printf '  %s\n' "${results[@]}"
  if [ "${#tails[@]}" -gt 0 ]; then printf '%s\n' "${tails[@]}"; fi
  if [ "$failed" -ne 0 ]; then
    echo "$1: FAILED"
    return 1
  fi
  echo "$1: all passed"
}
