/* SPDX-License-Identifier: MIT */
/*
 * USDT probes (provider "qtbus"), for bpftrace, perf and SystemTap to attach to a
 * running program (docs/operations.md "Tracing").  Built from <sys/sdt.h> (Debian:
 * systemtap-sdt-dev) when it is there; without it the functions below do nothing.
 *
 * A probe site is one nop plus a note in .note.stapsdt (readelf -n lists them).  Each
 * probe has a semaphore that a tracer raises while it is attached, so a site computes
 * its arguments only then: the cost when nobody traces is a load and a branch the CPU
 * predicts.  Arguments (all probes):
 *   dispatch   bus, type, subtype (or NULL), reached          a dispatch finished
 *   deliver    type, token, queued (0/1)                      a handler is about to run
 *   subscribe  bus, type, token                               a subscription was made
 *   dispose    token, userdata                                a subscription ended
 *   release    userdata                                       its release hook is about to run
 *   drop       bus, type, token, rule                         a bounded queue dropped a delivery
 * Strings are the engine's C strings (bpftrace: str(arg1)); a token is qtbus_token.id.
 */
#ifndef QTBUS_PROBES_H
#define QTBUS_PROBES_H

#include <stdbool.h>
#include <stdint.h>

#if defined(__has_include)
#if __has_include(<sys/sdt.h>) && !defined(QTSHIM_NO_PROBES)
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#define QTSHIM_PROBES 1
#endif
#endif

#ifdef QTSHIM_PROBES
#define QTSHIM_SEMAPHORE(name)                                                                                         \
    extern volatile unsigned short qtbus_##name##_semaphore __attribute__((visibility("hidden")))
QTSHIM_SEMAPHORE(dispatch);
QTSHIM_SEMAPHORE(deliver);
QTSHIM_SEMAPHORE(subscribe);
QTSHIM_SEMAPHORE(dispose);
QTSHIM_SEMAPHORE(release);
QTSHIM_SEMAPHORE(drop);
#undef QTSHIM_SEMAPHORE
#define QTSHIM_ENABLED(name) __builtin_expect(qtbus_##name##_semaphore != 0, 0)

static inline bool qtshim_probe_dispatch_enabled(void) { return QTSHIM_ENABLED(dispatch); }
static inline void qtshim_probe_dispatch(const void *bus, const char *type, const char *subtype, int32_t reached)
{
    STAP_PROBE4(qtbus, dispatch, bus, type, subtype, reached);
}
static inline bool qtshim_probe_deliver_enabled(void) { return QTSHIM_ENABLED(deliver); }
static inline void qtshim_probe_deliver(const char *type, uint64_t token, int32_t queued)
{
    STAP_PROBE3(qtbus, deliver, type, token, queued);
}
static inline bool qtshim_probe_subscribe_enabled(void) { return QTSHIM_ENABLED(subscribe); }
static inline void qtshim_probe_subscribe(const void *bus, const char *type, uint64_t token)
{
    STAP_PROBE3(qtbus, subscribe, bus, type, token);
}
static inline bool qtshim_probe_dispose_enabled(void) { return QTSHIM_ENABLED(dispose); }
static inline void qtshim_probe_dispose(uint64_t token, const void *userdata)
{
    STAP_PROBE2(qtbus, dispose, token, userdata);
}
static inline bool qtshim_probe_release_enabled(void) { return QTSHIM_ENABLED(release); }
static inline void qtshim_probe_release(const void *userdata) { STAP_PROBE1(qtbus, release, userdata); }
static inline bool qtshim_probe_drop_enabled(void) { return QTSHIM_ENABLED(drop); }
static inline void qtshim_probe_drop(const void *bus, const char *type, uint64_t token, const char *rule)
{
    STAP_PROBE4(qtbus, drop, bus, type, token, rule);
}
#undef QTSHIM_ENABLED
#else
static inline bool qtshim_probe_dispatch_enabled(void) { return false; }
static inline void qtshim_probe_dispatch(const void *bus, const char *type, const char *subtype, int32_t reached)
{
    (void)bus;
    (void)type;
    (void)subtype;
    (void)reached;
}
static inline bool qtshim_probe_deliver_enabled(void) { return false; }
static inline void qtshim_probe_deliver(const char *type, uint64_t token, int32_t queued)
{
    (void)type;
    (void)token;
    (void)queued;
}
static inline bool qtshim_probe_subscribe_enabled(void) { return false; }
static inline void qtshim_probe_subscribe(const void *bus, const char *type, uint64_t token)
{
    (void)bus;
    (void)type;
    (void)token;
}
static inline bool qtshim_probe_dispose_enabled(void) { return false; }
static inline void qtshim_probe_dispose(uint64_t token, const void *userdata)
{
    (void)token;
    (void)userdata;
}
static inline bool qtshim_probe_release_enabled(void) { return false; }
static inline void qtshim_probe_release(const void *userdata) { (void)userdata; }
static inline bool qtshim_probe_drop_enabled(void) { return false; }
static inline void qtshim_probe_drop(const void *bus, const char *type, uint64_t token, const char *rule)
{
    (void)bus;
    (void)type;
    (void)token;
    (void)rule;
}
#endif

#endif
