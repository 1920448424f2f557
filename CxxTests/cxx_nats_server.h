/* SPDX-License-Identifier: MIT */
/*
 * cxx_nats_server.h -- a real nats-server for the C++ tests of qtbus_nats.hpp
 * (cxx_nats_server.c, over CTests/nats/nats_server.h):
 *   cxx_ns_start()    starts it on 127.0.0.1 on a free port; returns its url
 *   cxx_ns_kill()     SIGKILL (a crash); cxx_ns_restart(): again on the same port
 *   cxx_ns_stop()     kills it and removes its store directory
 *   cxx_ns_start_config(config), cxx_ns_stop_config(): a second one, configured
 * A test that fails exits, and the server (PR_SET_PDEATHSIG) goes with it.
 */
#ifndef QTBUS_CXX_NATS_SERVER_H
#define QTBUS_CXX_NATS_SERVER_H

#ifdef __cplusplus
extern "C" {
#endif

const char *cxx_ns_start(void);
void cxx_ns_kill(void);
void cxx_ns_restart(void);
void cxx_ns_stop(void);
/* A second server, with the configuration file `config` (nats_server.h's s.config);
 * returns its url, and stops it. */
const char *cxx_ns_start_config(const char *config);
void cxx_ns_stop_config(void);

#ifdef __cplusplus
}
#endif

#endif
