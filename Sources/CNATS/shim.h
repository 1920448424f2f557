/* SPDX-License-Identifier: MIT */
/* nats.c (https://github.com/nats-io/nats.c; Debian: libnats-dev), found by pkg-config
 * (libnats.pc): the bridge's sources (CQtbusNATS) include it, and Swift code that makes
 * its own natsOptions or natsConnection for QTNATSBridge can `import CNATS`. */
#include <nats/nats.h>
