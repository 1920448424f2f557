/* SPDX-License-Identifier: MIT */
/*
 * The semaphores of the USDT probes (qtbus_probes.h): a tracer that attaches to a
 * probe increments its semaphore, in the .probes section, and the probe's site then
 * computes its arguments.
 */
#include "qtbus_probes.h"

#ifdef QTSHIM_PROBES
#define QTSHIM_SEMAPHORE(name)                                                                                         \
    volatile unsigned short qtbus_##name##_semaphore __attribute__((section(".probes"), visibility("hidden"))) = 0
QTSHIM_SEMAPHORE(dispatch);
QTSHIM_SEMAPHORE(deliver);
QTSHIM_SEMAPHORE(subscribe);
QTSHIM_SEMAPHORE(dispose);
QTSHIM_SEMAPHORE(release);
QTSHIM_SEMAPHORE(drop);
#else
typedef int qtshim_no_probes; /* an empty translation unit is not ISO C */
#endif
