/* SPDX-License-Identifier: MIT */
/* Platform glue for the Swift engine: thread-exit hooks, main-thread test, libdispatch. */
#define _GNU_SOURCE
#include "qtbus_shims.h"
#include <linux/membarrier.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int errno_is_eintr(void) { return errno == EINTR; }

QTBUS_INTERNAL uint64_t qtshim_epoch_global = 1;
QTBUS_INTERNAL uint64_t qtshim_retire_pending = 0;
QTBUS_INTERNAL uint32_t qtshim_registry_lock_word;
QTBUS_INTERNAL uint32_t qtshim_reclaimer_lock_word;
QTBUS_INTERNAL void *qtshim_thread_records_head;

/* A pthread key only for its destructor: it hands a thread's record back when the
 * thread ends, so the reclamation scan does not grow with dead threads. */
static pthread_key_t tls_exit_key;
static pthread_once_t tls_exit_once = PTHREAD_ONCE_INIT;
static void (*tls_exit_hook)(void *);

static void tls_exit_trampoline(void *record)
{
    qtshim_thread()->record = NULL;
    void (*hook)(void *) = __atomic_load_n(&tls_exit_hook, __ATOMIC_ACQUIRE);
    if (hook) hook(record);
}

static void tls_exit_key_create(void) { pthread_key_create(&tls_exit_key, tls_exit_trampoline); }

void qtshim_tls_set(void *record, void (*on_exit)(void *))
{
    pthread_once(&tls_exit_once, tls_exit_key_create);
    /* Always the same function; stored atomically because every new thread stores it. */
    __atomic_store_n(&tls_exit_hook, on_exit, __ATOMIC_RELEASE);
    qtshim_thread()->record = record;
    pthread_setspecific(tls_exit_key, record);
}

QTBUS_INTERNAL bool qtshim_exit_unfenced;
QTBUS_INTERNAL bool qtshim_exit_unfenced_no_tsan;

/* Whether the comma-separated list `list` holds `word`. */
static bool lists(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, word, n) == 0) return true;
        if (!end) break;
        p = end + 1;
    }
    return false;
}

__attribute__((constructor)) static void qtshim_debug_init(void)
{
    const char *v = getenv("QTBUS_DEBUG");
    if (v == NULL || *v == '\0' || strcmp(v, "0") == 0) return;
    /* "escapes" is accepted and adds nothing: escapes are always reported now. */
    qtshim_debug_misuse = lists(v, "all") || lists(v, "1") || lists(v, "misuse");
}

#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define QTSHIM_HAVE_MEMCHECK 1
#endif
#endif

__attribute__((noinline, no_sanitize("address"))) uint64_t qtshim_stack_peek(const void *p)
{
    uint64_t v = *(const volatile uint64_t *)p;
#ifdef QTSHIM_HAVE_MEMCHECK
    /* A copy made defined: what the frame left there is compared, not judged. */
    VALGRIND_MAKE_MEM_DEFINED(&v, sizeof v);
#endif
    return v;
}

bool qtshim_on_thread_stack(uintptr_t address)
{
    /* The bounds are asked once per thread, and only when a call runs above an open
     * section's frame (Reclamation.swift): for the main thread glibc reads
     * /proc/self/maps. */
    static __thread uintptr_t low, high;
    if (high == 0) {
        pthread_attr_t attr;
        void *base;
        size_t size;
        if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
        int got = pthread_attr_getstack(&attr, &base, &size);
        pthread_attr_destroy(&attr);
        if (got != 0) return false;
        low = (uintptr_t)base;
        high = low + size;
    }
    return address >= low && address < high;
}

static int escape_reported;

void qtshim_escape_noticed(const char *text)
{
    qtshim_note(text);
    if (__atomic_exchange_n(&escape_reported, 1, __ATOMIC_RELAXED)) return;
    qtshim_warn("qtbus: ");
    qtshim_warn(text);
    qtshim_warn(" (reported once per process)\n");
}

void qtshim_warn(const char *text)
{
    size_t n = strlen(text);
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, text, n);
        if (w < 0 && errno_is_eintr()) continue;
        if (w <= 0) return;
        text += w;
        n -= (size_t)w;
    }
}

/* Before any engine call: the flag must not change while records are in use. */
__attribute__((constructor)) static void qtshim_membarrier_init(void)
{
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
    qtshim_exit_unfenced = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    qtshim_exit_unfenced_no_tsan = qtshim_exit_unfenced && !__tsan_release;
}

void qtshim_membarrier(void) { syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0); }

#include <linux/futex.h>

char qtshim_tsan_handlers;

#if defined(__x86_64__) || defined(__i386__)
#define QTSHIM_PAUSE() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define QTSHIM_PAUSE() __asm__ __volatile__("yield")
#else
#define QTSHIM_PAUSE() ((void)0)
#endif

void qtshim_lock_wait(uint32_t *word)
{
    /* The engine's critical sections are a few dozen instructions (no user code runs
     * under these locks), so the holder is most likely about to let go: spin a little
     * before paying two system calls (docs/perf-notes.md, "The futex lock spins before
     * it sleeps"). */
    for (int spin = 0; spin < 100; spin++) {
        QTSHIM_PAUSE();
        uint32_t expected = 0;
        if (__atomic_load_n(word, __ATOMIC_RELAXED) == 0 &&
            __atomic_compare_exchange_n(word, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return;
    }
    /* Mark the lock contended, then sleep until it is released; whoever takes it from
     * here leaves it marked 2, so its unlock wakes the next waiter. */
    while (__atomic_exchange_n(word, 2, __ATOMIC_ACQUIRE) != 0)
        syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void qtshim_lock_wake(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }

void qtshim_idle_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns)
{
    struct timespec ts, *limit = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        limit = &ts;
    }
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, limit, NULL, 0);
}

void qtshim_idle_wake(uint32_t *word) { syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0); }

bool qtshim_is_main_thread(void) { return (pid_t)syscall(SYS_gettid) == getpid(); }

uint64_t qtshim_thread_name_make(const char *label, char out[16])
{
    if (!label || !*label) label = "qtbus.queue";
    size_t n = strnlen(label, 15);
    /* Cut short: not inside a character, whose continuation bytes are 10xxxxxx (a name
     * cut there would be invalid UTF-8 in top and gdb). */
    if (label[n] != '\0') {
        while (n > 0 && ((unsigned char)label[n] & 0xC0) == 0x80)
            n--;
    }
    memset(out, 0, 16);
    memcpy(out, label, n);
    /* FNV-1a over the 16 bytes. */
    uint64_t hash = 14695981039346656037ull;
    for (int i = 0; i < 16; i++)
        hash = (hash ^ (unsigned char)out[i]) * 1099511628211ull;
    return hash ? hash : 1;
}

void qtshim_thread_name_apply(uint64_t hash, const char *name)
{
    /* The calling thread's own name: one prctl (pthread_setname_np does the same for
     * pthread_self()).  Failing changes nothing else; it is not tried again until the
     * thread runs work of another name. */
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
    qtshim_thread()->named = hash;
}

/* libdispatch's C entry points under names of our own (asm labels), so this file needs
 * no dispatch headers and cannot clash with the Swift Dispatch overlay's imports. */
extern struct qtshim_dispatch_queue_s qtshim_dispatch_main_q __asm__("_dispatch_main_q");
qtshim_dispatch_queue_t qtshim_dispatch_queue_create(const char *, void *) __asm__("dispatch_queue_create");
void qtshim_dispatch_async_f(qtshim_dispatch_queue_t, void *, void (*)(void *)) __asm__("dispatch_async_f");
void qtshim_dispatch_release(void *) __asm__("dispatch_release");
/* The run-loop SPI CoreFoundation uses to pump the main queue: on Linux the "port" is
 * an eventfd that libdispatch writes when main-queue work is posted and never reads. */
int qtshim_dispatch_main_port(void) __asm__("_dispatch_get_main_queue_port_4CF");
void qtshim_dispatch_main_callback(void *) __asm__("_dispatch_main_queue_callback_4CF");

/* ThreadSanitizer (qtbus_shims.h explains the annotations).  libdispatch is not
 * instrumented either: the continuation it callocs for a post on one thread and frees
 * after the run on another, and a queue's own memory, would be reported as races.
 * While the sanitizer's runtime is present, libdispatch's writes made inside these
 * calls are ignored (its allocations then carry no earlier write), and a post goes
 * through a trampoline that declares post -> run.  Otherwise each call tests one
 * weak symbol. */
extern void AnnotateIgnoreWritesBegin(const char *file, int line) __attribute__((weak));
extern void AnnotateIgnoreWritesEnd(const char *file, int line) __attribute__((weak));
static inline bool qtshim_tsan_present(void) { return __tsan_release && AnnotateIgnoreWritesBegin; }

qtshim_dispatch_queue_t qtshim_dq_create_serial(const char *label)
{
    if (!qtshim_tsan_present()) return qtshim_dispatch_queue_create(label, NULL); /* NULL: serial */
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    qtshim_dispatch_queue_t queue = qtshim_dispatch_queue_create(label, NULL);
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
    return queue;
}
qtshim_dispatch_queue_t qtshim_dq_main(void) { return &qtshim_dispatch_main_q; }

struct qtshim_tsan_post {
    void (*work)(void *);
    void *context;
};

static void qtshim_tsan_trampoline(void *raw)
{
    __tsan_acquire(raw);
    struct qtshim_tsan_post post = *(struct qtshim_tsan_post *)raw;
    free(raw);
    post.work(post.context);
}

void qtshim_dq_async(qtshim_dispatch_queue_t queue, void *context, void (*work)(void *))
{
    if (!qtshim_tsan_present()) {
        qtshim_dispatch_async_f(queue, context, work);
        return;
    }
    struct qtshim_tsan_post *post;
    while (!(post = malloc(sizeof *post)))
        usleep(1000); /* a post cannot fail: wait */
    post->work = work;
    post->context = context;
    __tsan_release(post);
    AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
    qtshim_dispatch_async_f(queue, post, qtshim_tsan_trampoline);
    AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
}
void qtshim_dq_release(qtshim_dispatch_queue_t queue) { qtshim_dispatch_release(queue); }

int qtshim_main_queue_fd(void) { return qtshim_dispatch_main_port(); }

void qtshim_main_queue_run(void)
{
    int fd = qtshim_dispatch_main_port();
    uint64_t count;
    /* Clear first: work posted while we drain pokes the fd again and stays pending. */
    while (read(fd, &count, sizeof count) < 0 && errno_is_eintr()) {
    }
    qtshim_dispatch_main_callback(NULL);
}

int qtshim_main_queue_poll(int timeout_ms)
{
    struct pollfd p = {.fd = qtshim_dispatch_main_port(), .events = POLLIN, .revents = 0};
    int r;
    do {
        r = poll(&p, 1, timeout_ms);
    } while (r < 0 && errno_is_eintr());
    return r;
}

uint32_t qtshim_next_bus_serial(void)
{
    static uint32_t last;
    uint32_t serial;
    do
        serial = __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
    while (serial == 0);
    return serial;
}
