#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The USDT probes fire, in order and with the right arguments: a small program built
# against the installed library runs under gdb, which attaches to each probe as
# bpftrace or perf would (raising its semaphore) and prints its arguments.  (bpftrace
# itself needs a kernel that allows BPF, which a CI machine may not: docs/operations.md "Tracing".)
#   scripts/probes-test.sh [PREFIX]     default: _install
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
prefix=${1:-$ROOT/_install}
apt_install probes-test gdb

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/app.c" <<'C'
#include <qtbus.h>
static void on_login(const qtbus_event *event, void *userdata) { (void)event; (void)userdata; }
int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_token token;
    qtbus_subscribe(bus, "Login", NULL, on_login, (void *)0x5eed, NULL, &token);
    qtbus_dispatch(bus, &(qtbus_event_desc){ .type = "Login", .subtype = "alice" });
    qtbus_token_dispose(token);
    qtbus_bus_destroy(bus);
    /* A bounded main queue, never drained: the second delivery does not fit. */
    qtbus_bus *ticks = qtbus_bus_create();
    qtbus_queue_set_limit(qtbus_queue_main(), 1, QTBUS_OVERFLOW_DROP_NEWEST, -1);
    qtbus_sub_options on_main = { .queue = qtbus_queue_main() };
    qtbus_subscribe(ticks, "Tick", &on_main, on_login, NULL, NULL, NULL);
    qtbus_dispatch(ticks, &(qtbus_event_desc){ .type = "Tick", .subtype = "t1" });
    qtbus_dispatch(ticks, &(qtbus_event_desc){ .type = "Tick", .subtype = "t2" });
    return 0;
}
C
PKG_CONFIG_PATH="$prefix/lib/pkgconfig" cc -o "$tmp/app" "$tmp/app.c" $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs qtbus)

gdb_args=(-batch -nx -ex "set breakpoint pending on")
for probe in subscribe deliver dispatch dispose release drop; do gdb_args+=(-ex "break -probe-stap qtbus:$probe"); done
gdb_args+=(-ex run
  -ex 'printf "subscribe %s %#lx\n", $_probe_arg1, $_probe_arg2' -ex continue
  -ex 'printf "deliver %s %#lx %d\n", $_probe_arg0, $_probe_arg1, $_probe_arg2' -ex continue
  -ex 'printf "dispatch %s %s %d\n", $_probe_arg1, $_probe_arg2, $_probe_arg3' -ex continue
  -ex 'printf "dispose %#lx %#lx\n", $_probe_arg0, $_probe_arg1' -ex continue
  -ex 'printf "release %#lx\n", $_probe_arg0' -ex continue
  -ex 'printf "subscribe %s %#lx\n", $_probe_arg1, $_probe_arg2' -ex continue
  -ex 'printf "dispatch %s %s %d\n", $_probe_arg1, $_probe_arg2, $_probe_arg3' -ex continue
  -ex 'printf "drop %s %#lx %s\n", $_probe_arg1, $_probe_arg2, $_probe_arg3' -ex continue
  -ex 'printf "dispatch %s %s %d\n", $_probe_arg1, $_probe_arg2, $_probe_arg3' -ex continue)
got=$(timeout 120 gdb "${gdb_args[@]}" "$tmp/app" 2>&1 | grep -E '^(subscribe|deliver|dispatch|dispose|release|drop) ' || true)
want="subscribe Login 0x100000000
deliver Login 0x100000000 0
dispatch Login alice 1
dispose 0x100000000 0x5eed
release 0x5eed
subscribe Tick 0x200000000
dispatch Tick t1 1
drop Tick 0x200000000 QTBUS_OVERFLOW_DROP_NEWEST
dispatch Tick t2 0"
if [ "$got" != "$want" ]; then
  echo "probes-test: got:"; echo "$got"; echo "probes-test: want:"; echo "$want"
  die "the USDT probes did not fire as expected"
fi
echo "$got"
log "USDT probes: each fired once, in order, with its arguments"
