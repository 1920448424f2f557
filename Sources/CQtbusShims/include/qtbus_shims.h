/* SPDX-License-Identifier: MIT */
/*
 * Internal C support for the Swift engine (not installed, not API).
 *
 * Swift reaches the public header through this module so that the @_cdecl entry
 * points implement exactly the typedefs C programs see.  The rest is what Swift has
 * no portable spelling for: atomics on fields of manually allocated structs, an
 * initial-exec thread-local pointer, and libdispatch's C entry points (called
 * directly, so the engine needs neither Foundation nor the Swift Dispatch overlay).
 */
#ifndef QTBUS_SHIMS_H
#define QTBUS_SHIMS_H

#include "../../../include/qtbus.h"
#include "qtbus_probes.h"
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* The names qtbus.h defines, as C strings in static storage: Swift imports the macros
 * as String, whose bytes would have to be copied into an allocation on first use. */
static inline const char *qtshim_version_string(void) { return QTBUS_VERSION_STRING; }
static inline const char *qtshim_json_type(void) { return QTBUS_JSON_TYPE; }
static inline const char *qtshim_no_subscriber_type(void) { return QTBUS_NO_SUBSCRIBER_TYPE; }
static inline const char *qtshim_command_executing_type(void) { return QTBUS_COMMAND_EXECUTING_TYPE; }
static inline const char *qtshim_command_value_type(void) { return QTBUS_COMMAND_VALUE_TYPE; }
static inline const char *qtshim_command_error_type(void) { return QTBUS_COMMAND_ERROR_TYPE; }
static inline const char *qtshim_command_enabled_type(void) { return QTBUS_COMMAND_ENABLED_TYPE; }

/* Nothing here is API: keep every out-of-line symbol out of libqtbus.so's exports. */
#define QTBUS_INTERNAL __attribute__((visibility("hidden")))

/* The engine's hot thread-locals, in one struct: one access finds them all.  libqtbus.so
 * (CMake) defines QTBUS_TLS_DLOPEN_SAFE: no thread-local is initial-exec, so the library
 * needs no static TLS and loads with dlopen after start-up (Python's ctypes, a plugin
 * host) however little of glibc's static-TLS surplus is left.  qtshim_thread() is then
 * out of line, in tls.c, which alone is compiled with TLS descriptors on x86-64 (a call
 * that returns the offset at once for a library loaded at start-up): swiftc's code
 * generator would reach an inline accessor's variable through __tls_get_addr, and a
 * descriptor call inside larger C functions could, when the library is dlopen'ed, meet
 * glibc versions whose dynamic resolver does not preserve vector registers.  A build
 * that is never dlopen'ed (SwiftPM's, linked into a Swift program) keeps it inline and
 * initial-exec.  Code that reads several fields, or one field twice, calls
 * qtshim_thread() once. */
struct qtshim_thread {
    void *record;        /* the reclamation record (Reclamation.swift), NULL until made */
    void *trace_running; /* the trace hook whose call runs here (Trace.swift) */
    void *ring_running;  /* the bounded queue whose work runs here (BoundedQueue.swift) */
    int queued_running;  /* non-zero while a queued delivery's handler runs here */
    uint64_t named;      /* the hash of the name a queue last gave this thread (below) */
};
#if defined(QTBUS_TLS_DLOPEN_SAFE)
#define QTSHIM_TLS __thread
QTBUS_INTERNAL struct qtshim_thread *qtshim_thread(void);
#else
#define QTSHIM_TLS __thread __attribute__((tls_model("initial-exec")))
QTBUS_INTERNAL extern QTSHIM_TLS struct qtshim_thread qtshim_thread_locals;
static inline struct qtshim_thread *qtshim_thread(void) { return &qtshim_thread_locals; }
#endif

/* ---- atomics on plain fields (Swift passes pointer.field(\.name): see Lock.swift) ---- */
static inline uint64_t qtshim_atomic_load_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline uint64_t qtshim_atomic_load_seqcst_u64(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static inline void qtshim_atomic_store_u64(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline uint64_t qtshim_atomic_exchange_u64(uint64_t *p, uint64_t v)
{
    return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}
static inline uint64_t qtshim_atomic_fetch_add_u64(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
static inline uint64_t qtshim_atomic_fetch_sub_u64(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_sub(p, v, __ATOMIC_ACQ_REL);
}
/* One more on a counter that has one writer at a time (a thread, or whoever holds a
 * lock) and readers anywhere: a load and a store, not a locked read-modify-write. */
static inline void qtshim_bump_u64(uint64_t *p)
{
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_ACQUIRE) + 1, __ATOMIC_RELEASE);
}
static inline bool qtshim_atomic_cas_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
/* Sequentially consistent: one side of a handshake where each side writes, then reads
 * what the other wrote (BoundedQueue.swift: making room, then looking for waiters). */
static inline bool qtshim_atomic_cas_seqcst_u64(uint64_t *p, uint64_t expected, uint64_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}
static inline uint32_t qtshim_atomic_load_u32(const uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void qtshim_atomic_store_u32(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline bool qtshim_atomic_cas_u32(uint32_t *p, uint32_t expected, uint32_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static inline uint8_t qtshim_atomic_load_u8(const uint8_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline bool qtshim_atomic_cas_u8(uint8_t *p, uint8_t expected, uint8_t desired)
{
    return __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
static inline void *qtshim_atomic_load_ptr(void *const *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void qtshim_atomic_store_ptr(void **p, void *v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline void *qtshim_atomic_exchange_ptr(void **p, void *v)
{
    return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
}
/* Weak: may fail spuriously; on failure *expected receives the current value. */
static inline bool qtshim_atomic_cas_ptr(void **p, void **expected, void *desired)
{
    return __atomic_compare_exchange_n(p, expected, desired, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* ---- reclamation counters (Reclamation.swift explains the protocol) ----
 * Plain C globals: the dispatch path reads them with one load, no lazy-init check. */
QTBUS_INTERNAL extern uint64_t qtshim_epoch_global;   /* starts at 1; 0 in a record means "quiescent" */
QTBUS_INTERNAL extern uint64_t qtshim_retire_pending; /* items waiting for a grace period */
static inline uint64_t qtshim_epoch_now(void) { return __atomic_load_n(&qtshim_epoch_global, __ATOMIC_ACQUIRE); }
static inline uint64_t qtshim_epoch_advance(void)
{
    return __atomic_fetch_add(&qtshim_epoch_global, 1, __ATOMIC_SEQ_CST);
}
static inline uint64_t qtshim_pending_load(void) { return __atomic_load_n(&qtshim_retire_pending, __ATOMIC_SEQ_CST); }
static inline void qtshim_pending_add(int64_t n)
{
    __atomic_fetch_add(&qtshim_retire_pending, (uint64_t)n, __ATOMIC_SEQ_CST);
}

/* Asymmetric fence: every running thread of the process executes a full barrier before
 * qtshim_membarrier() returns (membarrier PRIVATE_EXPEDITED).  A load-time constructor
 * registers the process; qtshim_exit_unfenced says whether that worked (not in some
 * sandboxes), and so whether read-side exits may skip their fence. */
QTBUS_INTERNAL extern bool qtshim_exit_unfenced;
static inline bool qtshim_exit_unfenced_enabled(void) { return qtshim_exit_unfenced; }
/* The unfenced exit with no ThreadSanitizer edge to declare: the one flag the outermost
 * section's exit tests (set with qtshim_exit_unfenced; the runtime's weak symbols are
 * bound before constructors run). */
QTBUS_INTERNAL extern bool qtshim_exit_unfenced_no_tsan;
static inline bool qtshim_exit_unfenced_no_tsan_enabled(void) { return qtshim_exit_unfenced_no_tsan; }
QTBUS_INTERNAL void qtshim_membarrier(void);
static inline uint64_t qtshim_pending_load_relaxed(void)
{
    return __atomic_load_n(&qtshim_retire_pending, __ATOMIC_RELAXED);
}

/* ---- QTBUS_DEBUG ----
 * Read from the environment when the library is loaded: a comma-separated list in
 * which "misuse", "1" or "all" print each failed call's qtbus_errmsg() text on stderr
 * ("escapes", which once turned on noticing callbacks that did not return, is accepted
 * and adds nothing: that is always on). */
QTBUS_INTERNAL extern bool qtshim_debug_misuse;
/* An address in the calling frame (the stack grows down). */
static inline uintptr_t qtshim_frame(void) { return (uintptr_t)__builtin_frame_address(0); }
/* Writes `text` to stderr: no stdio buffer, no allocation. */
QTBUS_INTERNAL void qtshim_warn(const char *text);
/* Whether `address` lies in the calling thread's own stack (not a coroutine's). */
QTBUS_INTERNAL bool qtshim_on_thread_stack(uintptr_t address);
/* A callback left without returning and the library closed what it left open: says so
 * in qtbus_errmsg() on this thread, and on stderr once per process. */
QTBUS_INTERNAL void qtshim_escape_noticed(const char *text);
/* Reads 8 bytes of this thread's stack that may now belong to another frame (its
 * redzone under ASan, undefined for memcheck): no sanitizer report, no memcheck error. */
QTBUS_INTERNAL uint64_t qtshim_stack_peek(const void *p);

/* ---- Why a call failed (misuse.c) ----
 * Engine code records the reason for the status it is about to return; the C boundary
 * then finishes qtbus_errmsg()'s text with its function's name (qtshim_failed).
 * `text`, `what`, `problem` and `format` are static; `name` is the caller's. */
QTBUS_INTERNAL void qtshim_fail_reason(int status, const char *text);
QTBUS_INTERNAL void qtshim_fail_value(int status, const char *format, unsigned long long value);
QTBUS_INTERNAL void qtshim_fail_name(int status, const char *what, const char *name, const char *problem);
QTBUS_INTERNAL void qtshim_failed(const char *function, int status);
QTBUS_INTERNAL const char *qtshim_errmsg(void);
/* Puts `text` in qtbus_errmsg() without a failed call: a warning the caller should see
 * although its call succeeded (a second engine in the process, engines.c). */
QTBUS_INTERNAL void qtshim_note(const char *text);
/* How many failed calls this thread has finished: a C entry point that calls another
 * (Boundary/CEntry.swift's `nested`) finishes its own failure only when no inner call
 * finished one. */
QTBUS_INTERNAL unsigned qtshim_failures(void);

/* A serial number for a new bus (never 0): type ids carry it, so an id used on
 * another bus is told apart (TypeIds.swift). */
QTBUS_INTERNAL uint32_t qtshim_next_bus_serial(void);
/* Puts "function: " before the text an inner call finished (not printed again). */
QTBUS_INTERNAL void qtshim_failed_outer(const char *function);

/* ---- One engine per process (engines.c) ----
 * Marks this copy of the engine as used, the first time it makes a bus or a queue, and
 * then reports (qtbus_errmsg() on this thread, and stderr) another copy in use. */
QTBUS_INTERNAL void qtshim_engine_used(void);

/* ---- trace hooks (Trace.swift) ----
 * The trace hook whose call is running on this thread (NULL: none): nothing is traced
 * on a thread while a hook runs there, and qtbus_trace_set cannot wait there. */
static inline void *qtshim_trace_current(void) { return qtshim_thread()->trace_running; }
static inline void qtshim_trace_set_current(void *hook) { qtshim_thread()->trace_running = hook; }
/* How many buses have a hook taking MISUSE records: a failed call looks for its bus's
 * hook (under the registry lock) only when some bus has one. */
QTBUS_INTERNAL extern uint32_t qtshim_trace_misuse_hooks;
static inline bool qtshim_trace_misuse_somewhere(void)
{
    return __atomic_load_n(&qtshim_trace_misuse_hooks, __ATOMIC_RELAXED) != 0;
}
static inline void qtshim_trace_misuse_hooks_add(int32_t n)
{
    __atomic_fetch_add(&qtshim_trace_misuse_hooks, (uint32_t)n, __ATOMIC_RELAXED);
}
/* CLOCK_MONOTONIC in nanoseconds. */
QTBUS_INTERNAL uint64_t qtshim_now_ns(void);
/* Waits a little (a hook's calls still running elsewhere). */
QTBUS_INTERNAL void qtshim_pause(unsigned round);
/* Implemented by the engine: a MISUSE record for a failed call naming `bus`. */
QTBUS_INTERNAL void qtshim_trace_misuse(qtbus_bus *bus, const char *function, int status);

/* ---- LeakSanitizer ----
 * Subscription records live in mmap'd chunks, which LeakSanitizer does not scan: in a
 * user's program run under ASan, every live subscription's userdata would be reported
 * as leaked at exit.  When the sanitizer runtime is in the process (the weak symbol is
 * then defined), each chunk is registered as a root region, so what a live
 * subscription points to is reachable, as it is. */
extern void __lsan_register_root_region(const void *p, size_t size) __attribute__((weak));
static inline void qtshim_lsan_register_root_region(const void *p, size_t size)
{
    if (__lsan_register_root_region) __lsan_register_root_region(p, size);
}

/* ---- ThreadSanitizer ----
 * In a user's program built with -fsanitize=thread, the installed library is not
 * instrumented: ThreadSanitizer sees the user's callbacks and every malloc and free,
 * but not the futexes, atomics and queue hand-offs that order them, and would report
 * races the library's rules exclude (userdata written before subscribe and read by a
 * handler on another thread; a payload freed by the queue that ran its last delivery).
 * When its runtime is in the process (the weak symbols are then defined), the library
 * declares those happens-before edges; otherwise each costs one test of a GOT entry.
 * Edges: the lock word at unlock -> lock; a subscription's type entry at subscribe ->
 * every later dispatch of the type; every handler's return -> every release hook
 * (`qtshim_tsan_handlers`); a queue node at submit -> its run; a retired object at
 * retire -> its finalizer; each reference drop of a counted record -> its free. */
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));
static inline void qtshim_tsan_acquire(const void *p)
{
    if (__tsan_acquire) __tsan_acquire((void *)p);
}
static inline void qtshim_tsan_release(const void *p)
{
    if (__tsan_release) __tsan_release((void *)p);
}
/* The key of "a handler returned" -> "a release hook runs". */
QTBUS_INTERNAL extern char qtshim_tsan_handlers;
static inline void qtshim_tsan_handlers_returned(void) { qtshim_tsan_release(&qtshim_tsan_handlers); }
static inline void qtshim_tsan_before_release_hooks(void) { qtshim_tsan_acquire(&qtshim_tsan_handlers); }

/* ---- the calling thread's reclamation record ---- */
static inline void *qtshim_tls_get(void) { return qtshim_thread()->record; }
/* Stores the record and arranges for `on_exit(record)` when the thread ends. */
QTBUS_INTERNAL void qtshim_tls_set(void *record, void (*on_exit)(void *));

/* ---- the engine's process-wide words, in static storage ----
 * The registry lock (Registry.swift), and the reclaimer's lock and its list of thread
 * records (Reclamation.swift).  Allocated by a process's first call, they were
 * allocations whose failure no call could report (qtbus.h, "Out of memory"); here they
 * exist before the first call, zero (free, empty). */
QTBUS_INTERNAL extern uint32_t qtshim_registry_lock_word;
QTBUS_INTERNAL extern uint32_t qtshim_reclaimer_lock_word;
QTBUS_INTERNAL extern void *qtshim_thread_records_head;
static inline uint32_t *qtshim_registry_lock(void) { return &qtshim_registry_lock_word; }
static inline uint32_t *qtshim_reclaimer_lock(void) { return &qtshim_reclaimer_lock_word; }
static inline void **qtshim_thread_records(void) { return &qtshim_thread_records_head; }

/* ---- a small mutex (Drepper's three-state futex lock) ----
 * Uncontended lock and unlock are one atomic each, inline; pthread_mutex_t costs a
 * call and several times that a pair, and subscribe + dispose take two
 * (docs/perf-notes.md, "The registry's futex lock").
 * 0: free, 1: locked, 2: locked with waiters. */
QTBUS_INTERNAL void qtshim_lock_wait(uint32_t *word);
QTBUS_INTERNAL void qtshim_lock_wake(uint32_t *word);
static inline void qtshim_lock(uint32_t *word)
{
    uint32_t expected = 0;
    if (!__atomic_compare_exchange_n(word, &expected, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        qtshim_lock_wait(word);
    qtshim_tsan_acquire(word);
}
static inline void qtshim_unlock(uint32_t *word)
{
    qtshim_tsan_release(word);
    if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) == 2) qtshim_lock_wake(word);
}

/* ---- waiting for a bus to go idle (qtbus_bus_wait_idle, Features/WaitIdle.swift) ----
 * Sleeps while the 32-bit word at `word` holds `expected`, at most `timeout_ns` (< 0: no
 * limit); returns on a wake, a change, a signal or the timeout (the caller looks again).
 * The wake wakes every sleeper on `word`; it may be made after the word's memory was
 * freed, which a futex allows (the kernel then wakes nobody, or a sleeper that
 * tolerates a spurious wake). */
QTBUS_INTERNAL void qtshim_idle_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns);
QTBUS_INTERNAL void qtshim_idle_wake(uint32_t *word);
/* Non-zero while this thread runs a queued delivery's handler (QueuedDelivery.swift). */
static inline int qtshim_queued_current(void) { return qtshim_thread()->queued_running; }
/* The bounded queue whose work this thread is running, if any (BoundedQueue.swift: a
 * dispatch made there must not wait for that queue's room). */
static inline void *qtshim_ring_current(void) { return qtshim_thread()->ring_running; }

/* ---- threads ---- */
QTBUS_INTERNAL bool qtshim_is_main_thread(void);

/* ---- thread names (qtbus_queue_create's label, Queue.swift) ----
 * A created queue's work names the pool thread that runs it.  The thread remembers the
 * hash of the name it was last given here (struct qtshim_thread's `named`), so that work
 * of a queue whose name it has costs a comparison, and a rename (one prctl) happens only
 * when a thread moves to a queue of another name. */
/* Writes the name of a queue labelled `label` into out[16]: the label cut to at most 15
 * bytes, never inside a UTF-8 character ("qtbus.queue" for NULL or ""), NUL-padded.
 * Returns its hash, never 0 (a thread's "named by no queue"). */
QTBUS_INTERNAL uint64_t qtshim_thread_name_make(const char *label, char out[16]);
/* Names the calling thread `name`, and remembers `hash`. */
QTBUS_INTERNAL void qtshim_thread_name_apply(uint64_t hash, const char *name);
/* Names the calling thread `name` (of hash `hash`) unless that is the name it was last
 * given here. */
static inline void qtshim_thread_name_set(uint64_t hash, const char *name)
{
    if (__builtin_expect(qtshim_thread()->named != hash, 0)) qtshim_thread_name_apply(hash, name);
}

/* ---- libdispatch, by its C ABI ---- */
typedef struct qtshim_dispatch_queue_s *qtshim_dispatch_queue_t;
QTBUS_INTERNAL qtshim_dispatch_queue_t qtshim_dq_create_serial(const char *label);
QTBUS_INTERNAL qtshim_dispatch_queue_t qtshim_dq_main(void);
QTBUS_INTERNAL void qtshim_dq_async(qtshim_dispatch_queue_t queue, void *context, void (*work)(void *));
QTBUS_INTERNAL void qtshim_dq_release(qtshim_dispatch_queue_t queue);
/* Main queue pump: the eventfd libdispatch pokes when main-queue work is posted. */
QTBUS_INTERNAL int qtshim_main_queue_fd(void);
/* Clears the eventfd, then runs what is pending on the main queue. */
QTBUS_INTERNAL void qtshim_main_queue_run(void);
/* poll(2) on the fd; returns > 0 when readable. */
QTBUS_INTERNAL int qtshim_main_queue_poll(int timeout_ms);

/* ---- typed signals (signals.c; the engine's side in Features/Signals.swift, the C
 * entry points in Boundary/CSignals.swift) ---- */
/* Makes a signature (one reference) of `count` arguments of `kinds`, checked by the
 * caller, into *signature_out.  QTBUS_OK; QTBUS_ENOMEM; QTBUS_EINVAL (libffi refused it). */
QTBUS_INTERNAL int qtshim_signature_make(const qtbus_arg *kinds, size_t count, void **signature_out);
/* Drops a reference to a signature (the last one frees it). */
QTBUS_INTERNAL void qtshim_signature_release(void *signature);
/* Whether two signatures have the same kinds. */
QTBUS_INTERNAL bool qtshim_signature_equal(const void *a, const void *b);
/* Copies a signature's kinds (qtbus_arg values) into kinds_out, which has room for
 * QTBUS_SIGNAL_MAX_ARGS, and returns their count. */
QTBUS_INTERNAL size_t qtshim_signature_kinds(const void *signature, uint8_t *kinds_out);
/* The offsets of the bytes and of their size in what `const qtbus_event *` points to. */
QTBUS_INTERNAL void qtshim_signals_event_layout(size_t data_offset, size_t size_offset);
/* qtbus_signal_connect's subscription: a connection (its userdata, holding a reference
 * to `signature`; NULL when out of memory), its handler and its release, which calls
 * `release(userdata)`.  A connection whose subscription was not made is discarded. */
QTBUS_INTERNAL void *qtshim_connection_make(void *signature, void (*fn)(void), void *userdata, qtbus_release release);
QTBUS_INTERNAL void qtshim_connection_handler(const qtbus_event *event, void *connection);
QTBUS_INTERNAL void qtshim_connection_release(void *connection);
QTBUS_INTERNAL void qtshim_connection_discard(void *connection);
/* Room for an emit in progress, in the engine's frame (16-aligned): the packed bytes
 * when they fit, and the call its typed handlers get. */
#define QTSHIM_EMIT_SIZE 1024
/* Packs an emit's arguments for `signature` (`count` values, or with `varargs`, the
 * va_list qtbus_signal_emit handed over, read by the signature's kinds) into `emit`,
 * prepares its handlers' call, and makes it this thread's current emit until
 * qtshim_emit_end; *bytes and *size are then what to dispatch.  QTBUS_OK; QTBUS_EINVAL
 * (count not the signature's, values NULL with a count); QTBUS_ENOMEM. */
QTBUS_INTERNAL int qtshim_emit_begin(void *emit, const void *signature, const qtbus_value *values, size_t count,
                                     void *varargs, const void **bytes, size_t *size);
QTBUS_INTERNAL void qtshim_emit_end(void *emit);
/* Forgets this thread's emits in progress: a callback left them without returning, and
 * the library closed the dispatch they ran in (Reclamation.swift). */
QTBUS_INTERNAL void qtshim_signals_forget_emits(void);
/* qtbus_event_args of an event's bytes: the count, or QTBUS_EINVAL with its reason. */
QTBUS_INTERNAL int qtshim_event_args(const void *data, size_t size, qtbus_value *args_out, size_t count);
/* The same, silent: the count, or -1 for bytes that are not a signal's (nothing
 * reported).  For Swift's QTNamedEvent.signalArguments, which reads with signals.c's
 * reader instead of a copy of it. */
QTBUS_INTERNAL int qtshim_signal_unpack(const void *data, size_t size, qtbus_value values_out[QTBUS_SIGNAL_MAX_ARGS]);
/* Implemented by the engine: qtbus_signal_emit, with its va_list (a `varargs`). */
QTBUS_INTERNAL int qtshim_signal_emit_va(qtbus_bus *bus, const char *type, const char *subtype, void *varargs);

/* ---- status text (X-macro table in status.c) ---- */
QTBUS_INTERNAL const char *qtshim_status_text(int status);

#endif
