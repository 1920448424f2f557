/* SPDX-License-Identifier: MIT */
/* The engine's hot thread-locals (struct qtshim_thread: qtbus_shims.h says why they are
 * one struct, and why libqtbus.so reaches it through this file alone, compiled with TLS
 * descriptors). */
#include "qtbus_shims.h"

#if defined(QTBUS_TLS_DLOPEN_SAFE)
static __thread struct qtshim_thread locals;
/* Not written by hand to save the stack adjustment the compiler puts around the
 * descriptor call: glibc 2.36's resolver for a dlopen'ed library (_dl_tlsdesc_dynamic)
 * needs the aligned stack (test_dlopen crashed without it). */
struct qtshim_thread *qtshim_thread(void) { return &locals; }
#else
QTSHIM_TLS struct qtshim_thread qtshim_thread_locals;
#endif
