/* SPDX-License-Identifier: MIT */
/*
 * failmalloc.so: an LD_PRELOAD allocator that fails one allocation, for the
 * out-of-memory sweep (scripts/oom-sweep.sh).
 *
 *   QTBUS_FAIL_ALLOC=N   the N-th allocation (1-based) counted between the program's
 *                        calls of oom_arm() and oom_disarm() returns NULL (mmap: MAP_FAILED, errno ENOMEM);
 *                        0 or unset: none fails, and the count is printed at exit
 *   QTBUS_FAIL_REPORT=F  where to write "N <call>" for the failed allocation (the call
 *                        the workload named with oom_call() when it failed), and on the
 *                        next lines the allocating stack as "module offset" pairs
 *
 * Counted: malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign and
 * anonymous mmap, from any code in the process (the library, the Swift runtime and
 * libdispatch linked into it, libc).  Allocations before oom_arm() (start-up) are not
 * counted, so N means the same allocation in every run of the same workload.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static atomic_long counted;
static atomic_int armed;
static long fail_at;
static const char *volatile current_call = "start-up";
static __thread int inside; /* our own bookkeeping allocates nothing, but dlsym may */

void oom_arm(void) { atomic_store(&armed, 1); }
void oom_disarm(void) { atomic_store(&armed, 0); }
void oom_call(const char *name) { current_call = name; }

static void report(long n)
{
    const char *path = getenv("QTBUS_FAIL_REPORT");
    if (!path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%ld %s\n", n, current_call);
    void *frames[24];
    int depth = backtrace(frames, 24);
    for (int i = 2; i < depth; i++) { /* past report() and should_fail() */
        Dl_info info;
        if (dladdr(frames[i], &info) && info.dli_fname)
            fprintf(f, "%s 0x%lx\n", info.dli_fname, (unsigned long)((char *)frames[i] - (char *)info.dli_fbase - 1));
    }
    fclose(f);
}

/* True when this allocation is the one to fail. */
static int should_fail(void)
{
    if (inside || !atomic_load_explicit(&armed, memory_order_relaxed)) return 0;
    long n = atomic_fetch_add(&counted, 1) + 1;
    if (fail_at == 0 || n != fail_at) return 0;
    inside = 1;
    report(n);
    inside = 0;
    return 1;
}

__attribute__((constructor)) static void init(void)
{
    const char *v = getenv("QTBUS_FAIL_ALLOC");
    fail_at = v ? atol(v) : 0;
    /* backtrace() loads the unwinder on its first use: do it now, not out of memory. */
    void *warm[1];
    inside = 1;
    backtrace(warm, 1);
    inside = 0;
}

__attribute__((destructor)) static void fini(void)
{
    if (fail_at == 0 && getenv("QTBUS_FAIL_COUNT")) {
        FILE *f = fopen(getenv("QTBUS_FAIL_COUNT"), "w");
        if (f) {
            fprintf(f, "%ld\n", atomic_load(&counted));
            fclose(f);
        }
    }
}

/* The next definition of `name` (libc's), looked up once. */
#define REAL(name)                                                                                                     \
    static __typeof__(&name) real_##name;                                                                              \
    if (!real_##name) real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

void *malloc(size_t size)
{
    REAL(malloc);
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return real_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    /* dlsym itself may call calloc before real_calloc is known: a static buffer then. */
    static char early[4096];
    static size_t early_used;
    static void *(*real_calloc)(size_t, size_t);
    if (!real_calloc) {
        static int resolving;
        if (resolving) {
            size_t want = (n * size + 15) & ~(size_t)15;
            if (early_used + want > sizeof early) return NULL;
            void *p = early + early_used;
            early_used += want;
            return p;
        }
        resolving = 1;
        real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
        resolving = 0;
    }
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return real_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    REAL(realloc);
    if (size != 0 && should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return real_realloc(p, size);
}

int posix_memalign(void **out, size_t align, size_t size)
{
    REAL(posix_memalign);
    if (should_fail()) return ENOMEM;
    return real_posix_memalign(out, align, size);
}

void *aligned_alloc(size_t align, size_t size)
{
    REAL(aligned_alloc);
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return real_aligned_alloc(align, size);
}

void *memalign(size_t align, size_t size)
{
    REAL(memalign);
    if (should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return real_memalign(align, size);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    REAL(mmap);
    if ((flags & MAP_ANONYMOUS) && should_fail()) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    return real_mmap(addr, len, prot, flags, fd, off);
}
