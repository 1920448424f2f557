#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The example deployment (README.md beside this file), in one command:
#
#   examples/deployment/try.sh [PREFIX]     (PREFIX: the install prefix, default _install)
#
# In a temporary directory: makes a CA and a server certificate with openssl (as
# README.md says), starts nats-server with nats-server.conf (TLS, the accounts ORDERS and
# BILLING) on a free port, builds examples/nats_subscriber.c and nats_publisher.c with
# pkg-config alone, runs the subscriber as billing and the publisher as orders over TLS,
# and checks that the four orders crossed.  Then what the server refuses: a client that
# does not trust the CA, a wrong password, and orders' events published with billing's
# user (the server denies them; the bridge reports it).  The server is stopped and the
# directory removed whatever happens.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
prefix=$(realpath "${1:-$root/_install}")
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
server=$(command -v nats-server || echo /usr/sbin/nats-server)
die() { echo "try.sh: $*" >&2; exit 1; }
[ -x "$server" ] || die "nats-server not found (Debian: apt-get install nats-server; scripts/deps.sh does)"

work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"

# The certificates, as README.md makes them.
mkdir certs
(
  cd certs
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 365 \
    -subj /CN=qtbus-example-ca -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign -keyout ca-key.pem -out ca.pem
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost \
    -keyout server-key.pem -out server.csr
  printf '%s\n' 'subjectAltName = DNS:localhost,IP:127.0.0.1' 'extendedKeyUsage = serverAuth' > server.ext
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca-key.pem -CAcreateserial -days 365 \
    -extfile server.ext -out server.pem
) > openssl.log 2>&1 || { cat openssl.log; die "openssl failed"; }
echo "certificates: certs/ca.pem, certs/server.pem (localhost, 127.0.0.1)"

flags=$(pkg-config --cflags --libs qtbus-nats)
for half in subscriber publisher; do
  # shellcheck disable=SC2086
  ${CC:-cc} -std=c11 -Wall -Wextra -pedantic -Werror "$root/examples/nats_$half.c" $flags -pthread -o "$half"
done

# The configuration as it is; the port on the command line (it overrides listen:).
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$server" -c "$here/nats-server.conf" -a 127.0.0.1 -p "$port" -l "$work/server.log" &
pids+=($!)
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.05
done
echo "nats-server on tls://localhost:$port (nats-server.conf: TLS, accounts ORDERS and BILLING)"

# billing subscribes, orders publishes; both trust the CA through OpenSSL's SSL_CERT_FILE.
export SSL_CERT_FILE=$work/certs/ca.pem
mkfifo out
env -u LD_LIBRARY_PATH ./subscriber "tls://billing:billing-s3cret@localhost:$port" > out &
sub=$!
pids+=($sub)
exec 4< out
read -r -t 10 line <&4 || die "the subscriber did not start"
[ "$line" = ready ] || die "the subscriber said: $line"
echo "billing: ready (imports Order.>)"
env -u LD_LIBRARY_PATH ./publisher "tls://orders:orders-s3cret@localhost:$port" | sed 's/^/orders: /'
got=$(timeout 10 cat <&4) || die "the subscriber did not finish"
wait "$sub" || die "the subscriber failed"
echo "$got" | sed 's/^/billing: /'
expected='Order.created: {"id": 1, "item": "tea"}
Order.created: {"id": 2, "item": "cake"}
Order.paid: {"id": 1}
Order.closed: {}'
[ "$got" = "$expected" ] || die "billing printed something else"

# What the server refuses.
if out=$(SSL_CERT_FILE=/dev/null env -u LD_LIBRARY_PATH ./publisher "tls://orders:orders-s3cret@localhost:$port" 2>&1); then
  die "a client that does not trust the CA connected: $out"
fi
echo "without the CA: $out"
grep -q "unable to get local issuer certificate" <<<"$out" || die "not the expected refusal"
if out=$(env -u LD_LIBRARY_PATH ./publisher "tls://orders:guessed@localhost:$port" 2>&1); then
  die "a wrong password connected: $out"
fi
echo "wrong password: $out"
grep -q "was reached and refused access: .*Authorization Violation" <<<"$out" || die "not the expected refusal"
out=$(QTBUS_DEBUG=misuse env -u LD_LIBRARY_PATH ./publisher "tls://billing:billing-s3cret@localhost:$port" 2>&1 || true)
echo "$out" | sed 's/^/billing as publisher: /'
grep -q 'Permissions Violation for Publish to "qtbus.e._.Order' <<<"$out" || die "the denied publish was not reported"
echo "try.sh: the orders crossed over TLS between the two accounts; the refusals are as expected"
