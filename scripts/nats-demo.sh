#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The NATS examples through a local nats-server, in one command:
#
#   scripts/nats-demo.sh [PREFIX]        the C pair and the C++ example (PREFIX: the
#                                        install prefix, default _install)
#   scripts/nats-demo.sh --swift [BIN]   the Swift example (BIN: the qtbus-nats-demo that
#                                        `swift build` made; default: swift build's)
#
# The C pair: builds examples/nats_subscriber.c and nats_publisher.c with only
# `pkg-config --cflags --libs qtbus-nats`, starts nats-server on 127.0.0.1 on a free
# port, starts the subscriber, waits until it says "ready" (it has imported the pattern
# "Order.>"), runs the publisher (it exports "Order.>"), and checks that the subscriber
# printed the four orders, in order, and not the invoice, and exited.
# The C++ example (examples/nats_demo.cpp, qtbus_nats.hpp, built the same way) and the
# Swift one (examples/swift/nats_demo, QTEventBusNATS) join two buses of one process
# through the same kind of server; each must print the same transcript (two orders
# crossed, not the invoice; the counts; a url with no server refused).  The server is
# stopped whatever happens.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
swift=
if [ "${1:-}" = --swift ]; then
  swift=${2:-$(cd "$ROOT" && swift build --show-bin-path)/qtbus-nats-demo}
  [ -x "$swift" ] || die "$swift not found: run swift build first"
else
  prefix=$(realpath "${1:-$ROOT/_install}")
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
fi
server=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$server" ] || die "nats-server not found (Debian: apt-get install nats-server; scripts/deps.sh does)"

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

if [ -z "$swift" ]; then
  flags=$(pkg-config --cflags --libs qtbus-nats)
  for half in subscriber publisher; do
    echo "cc examples/nats_$half.c $flags"
    # shellcheck disable=SC2086
    ${CC:-cc} -std=c11 -Wall -Wextra -pedantic -Werror "$ROOT/examples/nats_$half.c" $flags -pthread -o "$work/$half"
  done
  echo "c++ examples/nats_demo.cpp $flags"
  # shellcheck disable=SC2086
  ${CXX:-c++} -std=c++17 -Wall -Wextra -pedantic -Werror "$ROOT/examples/nats_demo.cpp" $flags -pthread \
    -o "$work/nats_demo_cpp"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="nats://127.0.0.1:$port"
"$server" -a 127.0.0.1 -p "$port" -l "$work/server.log" &
pids+=($!)
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done
echo "nats-server on $url"

# two_buses NAME PROGRAM REFUSAL: runs the C++ or Swift example, which must print the
# transcript, its last line being REFUSAL (how that language says "no server there").
two_buses() {
  local name=$1 program=$2 refusal=$3 got
  echo "$name: $program $url"
  got=$(env -u LD_LIBRARY_PATH timeout 30 "$program" "$url") || die "the $name example failed: $got"
  echo "$got" | sed "s/^/$name: /"
  [ "$got" = "billing: Order.created {\"id\": 1, \"item\": \"tea\"}
billing: Order.paid {\"id\": 1}
shop: published 2 orders; billing: received 2
nats://127.0.0.1:1: no server there ($refusal)" ] || die "the $name example printed something else"
  echo "nats-demo: $name: the two orders crossed, in order; the invoice did not; no server is $refusal"
}

if [ -n "$swift" ]; then
  two_buses swift "$swift" QTBusError.io
  exit 0
fi

mkfifo "$work/out"
env -u LD_LIBRARY_PATH "$work/subscriber" "$url" > "$work/out" &
sub=$!
pids+=($sub)
exec 4< "$work/out"
read -r -t 10 line <&4 || die "the subscriber did not start"
[ "$line" = ready ] || die "the subscriber said: $line"
echo "subscriber: ready"

env -u LD_LIBRARY_PATH "$work/publisher" "$url"
got=$(timeout 10 cat <&4) || die "the subscriber did not finish"
wait "$sub" || die "the subscriber failed"
echo "$got" | sed 's/^/subscriber: /'
expected='Order.created: {"id": 1, "item": "tea"}
Order.created: {"id": 2, "item": "cake"}
Order.paid: {"id": 1}
Order.closed: {}'
[ "$got" = "$expected" ] || die "the subscriber printed something else"
echo "nats-demo: the four orders crossed, in order; the invoice did not"

two_buses c++ "$work/nats_demo_cpp" QTBUS_EIO
