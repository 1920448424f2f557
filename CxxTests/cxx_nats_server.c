/* SPDX-License-Identifier: MIT */
/*
 * cxx_nats_server.c -- CTests/nats/nats_server.h (the bridge's C tests' nats-server:
 * a free port on 127.0.0.1, its own store directory) for the C++ tests, which cannot
 * include it (C designated initializers).  One server per process (cxx_nats_server.h).
 */
#include "../CTests/nats/nats_server.h"

#include "cxx_nats_server.h"

static ns_server server, configured;

const char *cxx_ns_start(void)
{
    ns_start(&server);
    return server.url;
}

void cxx_ns_kill(void) { ns_kill(&server); }

void cxx_ns_restart(void) { ns_restart(&server); }

void cxx_ns_stop(void) { ns_stop(&server); }

const char *cxx_ns_start_config(const char *config)
{
    configured = (ns_server){.no_jetstream = 1, .config = config};
    ns_start(&configured);
    return configured.url;
}

void cxx_ns_stop_config(void) { ns_stop(&configured); }
