#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tracing example (README.md beside this file), in one command:
#
#   examples/tracing/run.sh [PREFIX [PYTHON]]   (PREFIX: the install prefix, default
#                                               _install; PYTHON: one with nats-py and
#                                               opentelemetry-sdk, default python3)
#
# Builds service.c with `pkg-config --cflags --libs qtbus-nats` alone, starts nats-server
# on 127.0.0.1 on a free port, starts the service, waits until it says "ready", runs
# client.py for two orders, prints both transcripts, and checks that every hop, in
# Python and in qtbus, printed the trace id the client started.  The server and the
# service are stopped and the directory removed whatever happens.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=$(realpath "${1:-$root/_install}")
python=${2:-python3}
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
server=$(command -v nats-server || echo /usr/sbin/nats-server)
die() { echo "run.sh: $*" >&2; exit 1; }
[ -x "$server" ] || die "nats-server not found (Debian: apt-get install nats-server; scripts/deps.sh does)"
(cd / && "$python" -c 'import nats, opentelemetry.sdk.trace') 2>/dev/null \
  || die "$python cannot import nats and opentelemetry: pip install nats-py opentelemetry-sdk (scripts/deps.sh)"

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

flags=$(pkg-config --cflags --libs qtbus-nats)
echo "cc examples/tracing/service.c $flags"
# shellcheck disable=SC2086
${CC:-cc} -std=c11 -Wall -Wextra -pedantic -Werror "$here/service.c" $flags -pthread -o "$work/service"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="nats://127.0.0.1:$port"
"$server" -a 127.0.0.1 -p "$port" -l "$work/server.log" &
pids+=($!)
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done
echo "nats-server on $url"

"$work/service" "$url" 2 >"$work/service.out" 2>&1 &
service=$!
pids+=($service)
for _ in $(seq 200); do
  grep -q '^ready$' "$work/service.out" 2>/dev/null && break
  kill -0 "$service" 2>/dev/null || { cat "$work/service.out"; die "the service ended before it was ready"; }
  sleep 0.05
done
grep -q '^ready$' "$work/service.out" || die "the service did not get ready"

client_rc=0
(cd / && timeout 30 "$python" "$here/client.py" "$url" 2) >"$work/client.out" 2>&1 || client_rc=$?
for _ in $(seq 100); do kill -0 "$service" 2>/dev/null || break; sleep 0.05; done
echo "--- client.py"
cat "$work/client.out"
echo "--- service.c"
cat "$work/service.out"
[ "$client_rc" = 0 ] || die "client.py failed ($client_rc)"

# Every hop of an order prints the trace id its Python span started.
mapfile -t sent < <(grep '^python publish Order' "$work/client.out" | grep -o 'trace [0-9a-f]\{32\}' | cut -d' ' -f2)
[ "${#sent[@]}" = 2 ] || die "client.py did not publish two orders"
for id in "${sent[@]}"; do
  for hop in "python publish Order" "python got shipped" ; do
    grep "^$hop" "$work/client.out" | grep -q "trace $id" || die "client.py's \"$hop\" did not see trace $id"
  done
  for hop in "qtbus Order (warehouse)" "qtbus Shipped (dispatched)"; do
    grep -F "$hop" "$work/service.out" | grep -q "trace $id" || die "the service's \"$hop\" did not see trace $id"
  done
done
echo "run.sh: one trace id from Python through qtbus (a queued handler, a dispatch) back to Python"
