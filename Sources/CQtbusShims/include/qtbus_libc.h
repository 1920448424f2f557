/* SPDX-License-Identifier: MIT
 * The C library as the engine imports it (`import CQtbusLibc`), in both of its modes.
 *
 * Embedded Swift, the mode libqtbus.so is compiled in, has no Glibc module; the
 * SwiftPM build has one.  The engine imports these headers instead of Glibc in both,
 * so that its source is the same: the functions, constants and types it calls are
 * the C library's own declarations, whichever runtime is around them.  What the
 * Glibc overlay adds in Swift (MAP_FAILED as a Swift constant, for one) is spelled
 * out where it is used.
 */
#ifndef QTBUS_LIBC_H
#define QTBUS_LIBC_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#endif
