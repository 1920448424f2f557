/* SPDX-License-Identifier: MIT */
/*
 * qtbus.h -- the C interface of libqtbus, an in-process event bus.
 *
 * Events are named types ("LoginEvent"), optionally refined by a subtype ("alice").
 * Subscriptions return tokens, can be collected in dispose bags, run on the
 * dispatching thread or on a queue, and are ordered by priority.
 *
 *     #include <qtbus.h>
 *     cc app.c $(pkg-config --cflags --libs qtbus)
 *
 * ERROR CONVENTION (stated once, holds for every function below)
 *   Functions that can fail return an int: QTBUS_OK (0) or a count (>= 0) where the
 *   function says so, or a negative qtbus_status.  A call that fails changes nothing,
 *   takes ownership of nothing and never calls the callbacks passed to it: in
 *   particular a release hook given to a failing call is NOT called; the caller still
 *   owns its userdata.
 *
 * THREADS
 *   Every function is thread-safe and may be called from inside a handler, except
 *   qtbus_main_drain() and qtbus_main_wait(), which only the process's main thread may
 *   call.  The library never calls a handler, a release hook or any other user code
 *   while it holds one of its locks, so callbacks may call back into the library.
 *
 * CALLBACKS MUST RETURN
 *   Every function the library calls (handler, release hook, object_release, reply
 *   handler, execute function, source start and stop, trace hook) returns normally.  A C++
 *   exception or a longjmp() out of a callback is outside this contract: the library
 *   cannot unwind what the interrupted call was doing (the rest of that dispatch is
 *   lost: later handlers, a request's completion, an object's release), and C++ code
 *   catches inside the callback.  What the library does repair is its own record of the
 *   calls in progress, which would otherwise stop every release hook in the process for
 *   good: the thread's next call into the library (or the thread's end) notices that the
 *   callback's frame is gone, closes the calls it interrupted, and says so on stderr
 *   (once per process) and in qtbus_errmsg() on that thread.  A return to a handler of an
 *   outer dispatch on the same thread (a longjmp() out of a nested dispatch) is closed
 *   when that outer dispatch returns.  A callback that switches stacks (a coroutine) and
 *   calls the library from the other stack is never taken for an escape.
 *
 * ONE ENGINE PER PROCESS
 *   A Swift program that uses the QTEventBus package carries its own copy of the engine;
 *   a C library it dlopen()s that links libqtbus.so shares that copy only if the program
 *   exports the engine's C entry points (docs/operations.md, "One engine per
 *   process").  Otherwise two engines run side by side, each with its own
 *   qtbus_shared(), and events do not cross.  That is never silent: the first call that
 *   makes a bus or a queue in the second engine (qtbus_shared() included) says so on
 *   stderr and in qtbus_errmsg() on its thread, naming that section.  Finding the other
 *   engine is a walk of the loaded objects made once per engine; no other call pays
 *   for it.
 *
 * OUT OF MEMORY
 *   A function that lists QTBUS_ENOMEM (or NULL for it) returns it when one of the
 *   library's allocations fails before the call changed anything; as any failure, it
 *   then changes nothing, takes nothing and calls nothing, and the library works again
 *   once memory is back.  Past that point a call does not fail: the allocations a
 *   dispatch makes once handlers may have run (the copy of the event for a queued or
 *   parked delivery), and those of calls that cannot fail (dispose, destroy, a release,
 *   a command's state events, an accepted execution), wait for memory and retry, 1 to
 *   100 ms apart, as libdispatch does with its own.  The same holds from the first
 *   call in a process: the library's one-time state is static or made where its failure
 *   is reported, and the first use of what cannot fail (qtbus_shared(),
 *   qtbus_queue_main(), a thread's first call) waits for memory as above; out of memory
 *   at the first calls does not end the process.  scripts/oom-sweep.sh fails each
 *   allocation of every call in turn, in a process's first calls and once every call
 *   was made before: no run dies.
 *
 * STRUCTS THAT GROW
 *   A struct the caller allocates and the library fills or reads (qtbus_queue_stats;
 *   qtbus_nats.h's qtbus_nats_options and qtbus_nats_stats; those to come) may gain
 *   fields at its end in a later version.  The function
 *   taking it then takes its size too: the header's function-like macro of the plain
 *   name passes the struct's size as the caller's header has it (qtbus_queue_stats_get(q,
 *   &s) calls qtbus_queue_stats_get_sized(q, &s, sizeof(qtbus_queue_stats)); NULL stays a
 *   valid argument, refused as before), so a program built against an older
 *   header keeps working with a newer library: the library fills (or reads) only the
 *   fields inside that size, and a library older than the header leaves the fields it
 *   does not know zero.  A size smaller than the struct has ever been is QTBUS_EINVAL.
 *   The plain-name functions stay exported for programs built against 0.2.0, with
 *   0.2.0's struct.  qtbus_event_desc and qtbus_sub_options grow under their flags.
 *
 * NAMES
 *   Event types and subtypes are NUL-terminated UTF-8 strings of 1 to 255 bytes.
 *   Anything else (NULL where required, "", 256+ bytes, invalid UTF-8) is QTBUS_EINVAL.
 *
 * LIFETIME RULES (the heart of the library)
 *   1. release(userdata) runs exactly once per successful subscribe: after the
 *      subscription is disposed (by its token, its bag, ONCE firing, or its bus being
 *      destroyed) and no invocation of its handler is running or still queued.  If no
 *      dispatch is in progress anywhere when the subscription is disposed, release runs
 *      before the disposing call returns; otherwise it runs once the dispatches that
 *      were in progress at that moment have returned, on one of their threads.
 *      Dispatches are qtbus_dispatch(), qtbus_dispatch_json(), qtbus_request(), a
 *      posted dispatch running on its queue, the replay qtbus_subscribe() delivers
 *      for QTBUS_SUB_REPLAY and a command's published events; no other call delays
 *      a release or runs another thread's release hook.
 *   2. After qtbus_token_dispose() (or qtbus_bag_dispose()) returns, no dispatch that
 *      begins afterwards reaches the handler, and queued deliveries not yet started
 *      are dropped.  A dispatch already in progress on another thread may still start
 *      it (it found the subscription live just before the dispose), as an invocation
 *      already running finishes: dispose does not wait for either and cannot deadlock.
 *      So free what the handler uses in its release hook, which rule 1 runs after both.
 *   3. Every call may be made from inside a handler: dispatch (re-entrant, delivered
 *      depth-first), subscribe, dispose -- a handler may dispose its own token.
 */
#ifndef QTBUS_H
#define QTBUS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define QTBUS_API __attribute__((visibility("default")))
#else
#define QTBUS_API
#endif

/* The version of this header.  The library's own is qtbus_version(); a program built
 * against this header runs on any libqtbus.so.0 at least as new (docs/operations.md:
 * "Versioning and ABI"). */
#define QTBUS_VERSION_MAJOR 0
#define QTBUS_VERSION_MINOR 3
#define QTBUS_VERSION_PATCH 0
#define QTBUS_VERSION_STRING "0.3.0"
/* Comparable number: major * 10000 + minor * 100 + patch. */
#define QTBUS_VERSION_NUMBER (QTBUS_VERSION_MAJOR * 10000 + QTBUS_VERSION_MINOR * 100 + QTBUS_VERSION_PATCH)
/* Nonzero when this header is version major.minor.patch or newer, as GLib's
 * GLIB_CHECK_VERSION: `#if QTBUS_CHECK_VERSION(0, 2, 0)` guards code that needs 0.2. */
#define QTBUS_CHECK_VERSION(major, minor, patch)                                                                       \
    (QTBUS_VERSION_MAJOR > (major) || (QTBUS_VERSION_MAJOR == (major) && QTBUS_VERSION_MINOR > (minor)) ||             \
     (QTBUS_VERSION_MAJOR == (major) && QTBUS_VERSION_MINOR == (minor) && QTBUS_VERSION_PATCH >= (patch)))

/* ---------------------------------------------------------------------------------
 * Status codes
 *
 * One table, QTBUS_STATUS_MAP(X), yields the enum, qtbus_strerror() and the names.
 * ------------------------------------------------------------------------------- */
#define QTBUS_STATUS_MAP(X)                                                                                            \
    X(OK, 0, "success")                                                                                                \
    X(EINVAL, -1, "invalid argument (NULL, bad name, unknown flag or bad size)")                                       \
    X(ESTALE, -2, "unknown or already disposed handle")                                                                \
    X(EJSON, -3, "text is not valid JSON (RFC 8259)")                                                                  \
    X(ENOMEM, -4, "out of memory")                                                                                     \
    X(ECLOSED, -5, "the bus is being destroyed")                                                                       \
    X(EBUSY, -6, "the command is not enabled (executing or disabled)")                                                 \
    X(EIO, -7, "connection or I/O failure (a server could not be reached)")                                            \
    X(ETIMEDOUT, -8, "the wait ran out of time (the awaited state was not reached)")                                   \
    X(EACCES, -9, "access refused (a server was reached and refused the credentials or a permission)")

typedef enum qtbus_status {
#define QTBUS__STATUS_ENUM(name, value, text) QTBUS_##name = (value),
    QTBUS_STATUS_MAP(QTBUS__STATUS_ENUM)
#undef QTBUS__STATUS_ENUM
        QTBUS__STATUS_LAST = -10
} qtbus_status;

/* Static English text for any int (unknown values included); never NULL. */
QTBUS_API const char *qtbus_strerror(int status);

/* Why the last call that failed on this thread failed: the function and the precise
 * reason, which a status alone does not tell (which argument is NULL, which name is
 * bad and why, which flag bits are unknown, a stale handle of which kind, the shared
 * bus, the wrong thread...), as sqlite3_errmsg() or dlerror() do:
 *     qtbus_subscribe: the subtype "\xff" is not valid UTF-8
 * Per thread; valid until this thread's next failed call; "" before any.  Successful
 * calls leave it, with two exceptions that are warnings, also printed on stderr once:
 * the call that noticed a callback which did not return (CALLBACKS MUST RETURN, above),
 * and the first call that made a bus or queue in a second engine (ONE ENGINE PER
 * PROCESS, above).  Never NULL; written without allocating, so it holds after
 * QTBUS_ENOMEM too (a name in it is cut at 48 bytes).
 *
 * QTBUS_DEBUG, read from the environment when the library is loaded, is a comma-
 * separated list: "misuse" (or "1", or "all") prints that text to stderr for every
 * failed call ("qtbus: " before it); "escapes" is accepted and adds nothing (escapes
 * are always reported now). */
QTBUS_API const char *qtbus_errmsg(void);

/* The library's version, e.g. "0.1.0"; equal to QTBUS_VERSION_STRING of the header it
 * was built with.  Static storage. */
QTBUS_API const char *qtbus_version(void);

/* ---------------------------------------------------------------------------------
 * Handles and callbacks (which must return normally: see the top of this file)
 *
 * Pointers (qtbus_bus *, qtbus_queue *) are for objects the caller creates and frees
 * once.  Things that are disposed, possibly from several places, are 64-bit ids: the
 * low half is a slot and the high half a generation, checked on every call, so a
 * stale or repeated dispose is QTBUS_ESTALE and never touches another object's
 * memory.  Id 0 is never issued and means "none".  Each handle is its own struct, so
 * passing a bag where a token is expected does not compile.
 * ------------------------------------------------------------------------------- */
typedef struct qtbus_bus qtbus_bus;     /* opaque */
typedef struct qtbus_queue qtbus_queue; /* opaque */
typedef struct qtbus_event qtbus_event; /* read-only view, valid only during the callback */

typedef struct {
    uint64_t id;
} qtbus_token;
typedef struct {
    uint64_t id;
} qtbus_bag;
typedef struct {
    uint64_t id;
} qtbus_command;
typedef struct {
    uint64_t id;
} qtbus_execution;
typedef struct {
    uint64_t id;
} qtbus_source;

/* A handler receives each event it subscribed to.  `event` and everything reached
 * through it is valid only until the handler returns: copy what you keep. */
typedef void (*qtbus_handler)(const qtbus_event *event, void *userdata);
/* Frees a userdata (or an event object).  Called exactly once, with no library lock
 * held, possibly on another thread than the one that handed the pointer over. */
typedef void (*qtbus_release)(void *userdata);

/* ---------------------------------------------------------------------------------
 * Buses
 * ------------------------------------------------------------------------------- */

/* The process-wide bus.  Never NULL, never destroyed. */
QTBUS_API qtbus_bus *qtbus_shared(void);

/* A new isolated bus (for tests, plugins, scopes).  NULL only when out of memory. */
QTBUS_API qtbus_bus *qtbus_bus_create(void);

/* Disposes every subscription, command and shared source of the bus (their release
 * hooks follow lifetime rule 1; a connected source is stopped first), drops its sticky
 * events and frees the bus.  Dispatches running on other threads at
 * that moment finish safely, and calls that reach the bus while it is being destroyed
 * return QTBUS_ECLOSED; after this returns the pointer must not be used again.
 * Returns QTBUS_OK, QTBUS_EINVAL for NULL or the shared bus. */
QTBUS_API int qtbus_bus_destroy(qtbus_bus *bus);

/* Waits until no delivery of `bus` is waiting or running on any queue, or until
 * `timeout_ms` passed (negative: no limit; 0: only looks).  What it waits for: every
 * delivery to a subscription with a queue (created queues and the main queue, replays
 * of sticky events included), from its dispatch until its handler returned and its
 * event's object_release (if it was the last delivery) ran, and every posted dispatch
 * (qtbus_dispatch_on_bus_queue / _on_main) with the deliveries it makes, and the
 * hops of Swift subscriptions delivered on a DispatchQueue (atQueue).  Work
 * dispatched meanwhile counts too, so a bus that never stops receiving may never be
 * idle.  Not counted: synchronous handlers on other threads, release hooks, command
 * executions.  It sleeps (a futex), woken when the last such piece of work ends; it
 * does not poll.  Tests of queued code wait with it rather than sleep.
 *
 * The main queue: on the process's main thread the call runs the main queue's work
 * while it waits, as qtbus_main_drain() does (so main-queue deliveries of the bus run
 * and are waited for; other main-queue work pending runs too).  On any other thread,
 * main-queue work counts but runs only when the main thread drains: waiting there for
 * a bus whose main-queue deliveries nobody drains ends only with the timeout.
 *
 * Returns QTBUS_OK when the bus is idle, QTBUS_ETIMEDOUT when the time passed first;
 * QTBUS_EINVAL for NULL, and, at once, when called from inside a handler (a queued
 * one or a synchronous one, of any bus: a handler on a queue would wait for its own
 * end, and queues are shared between buses; a posted dispatch's handlers included);
 * QTBUS_ECLOSED when the bus is being destroyed. */
QTBUS_API int qtbus_bus_wait_idle(qtbus_bus *bus, int timeout_ms);

/* ---------------------------------------------------------------------------------
 * Queues
 *
 * A handler subscribed with a queue runs there instead of on the dispatching thread.
 * Created queues are serial: one item at a time, FIFO, on background threads (not
 * always the same one).  The main queue runs on the process's main thread when the
 * program drains it (below).  It is the main queue of the libdispatch the engine runs
 * on.  The installed libqtbus.so carries a private libdispatch (linked in, with
 * QTBUS_SWIFT_RUNTIME=embedded, the default, or static), whose main queue only
 * qtbus_main_drain() and qtbus_main_wait() run.  Where the engine is a Swift program's own (the QTEventBus
 * SwiftPM product, and C code bound to it, docs/operations.md "One engine per
 * process"), or libqtbus.so was built on the shared runtime, it is the queue Swift
 * code calls DispatchQueue.main, and C and Swift main-queue work is one FIFO.
 * ------------------------------------------------------------------------------- */

/* The main queue.  Static: never NULL, qtbus_queue_release() on it does nothing. */
QTBUS_API qtbus_queue *qtbus_queue_main(void);

/* A new serial queue; `label` (nullable) names it in debuggers.  NULL only when out of
 * memory.  The caller owns one reference, given back with qtbus_queue_release().
 *   Its threads carry its name: while the queue's work runs (a handler, a release, an
 * execution), its thread is named the label cut to 15 bytes (the kernel's limit, 16
 * with the NUL), never inside a UTF-8 character; "qtbus.queue" for NULL or "".  That is
 * what /proc/self/task/<tid>/comm, top -H, ps -L and gdb's "info threads" show.  The
 * queue's threads are libdispatch's pool, which runs every queue's work: the name is
 * given when the thread starts a turn of this queue's work, and kept after it, since
 * naming it back would cost a system call each turn (an idle pool thread shows the
 * last queue it worked for).  A thread is renamed only when it comes from work of
 * another name (a comparison per turn, not per delivery), so a handler that renames
 * its own thread keeps its name until the thread runs another queue's work.  The main
 * queue's thread is the program's, and is never renamed. */
QTBUS_API qtbus_queue *qtbus_queue_create(const char *label);

/* Gives back the caller's reference.  Work already queued still runs, and
 * subscriptions that use the queue keep it alive until they are released.  On a
 * bounded queue (below) with QTBUS_OVERFLOW_BLOCK, dispatchers waiting for room are
 * woken and their deliveries dropped (counted, traced with function
 * "qtbus_queue_release"), and from then on a delivery that does not fit is dropped
 * rather than waited for.  NULL and the main queue are ignored. */
QTBUS_API void qtbus_queue_release(qtbus_queue *queue);

/* What a bounded queue does with a delivery that finds it full. */
typedef enum qtbus_overflow {
    QTBUS_OVERFLOW_GROW = 0,        /* unbounded: the default */
    QTBUS_OVERFLOW_BLOCK = 1,       /* the dispatching thread waits for room */
    QTBUS_OVERFLOW_DROP_NEWEST = 2, /* the delivery that does not fit is dropped */
    QTBUS_OVERFLOW_DROP_OLDEST = 3, /* the oldest waiting delivery is dropped to make room */
    QTBUS_OVERFLOW_LATEST = 4       /* coalesce: a new delivery always replaces a waiting
                                       one of the same subscription, type and subtype
                                       (full or not), keeping its place; when full with
                                       nothing to replace, as DROP_OLDEST */
} qtbus_overflow;

/* Bounds `queue` (a created queue or qtbus_queue_main()): at most `capacity`
 * deliveries wait on it (all its subscriptions, of every bus, together), and
 * `overflow` says what happens to one more.  Any time, from any thread; the new limit
 * applies to the next delivery.  The capacity counts every delivery waiting, whenever
 * it was queued (before the queue had a limit too): a queue found holding more than a
 * new capacity keeps what waits, and takes nothing beyond it, by its rule: BLOCK waits
 * for the queue to come below it, DROP_NEWEST drops the new delivery, DROP_OLDEST and
 * LATEST drop the oldest waiting one (those queued before the limit first).  Capacity
 * 0 with QTBUS_OVERFLOW_GROW makes the queue unbounded again.  `block_timeout_ms`:
 * QTBUS_OVERFLOW_BLOCK only (negative: no limit; 0: do not wait), after which the
 * delivery is dropped.  Dispatchers waiting when the limit changes look again under
 * the new one.
 *
 * The rules, for every delivery a dispatch makes to a subscription on the queue (a
 * replay of sticky events included):
 * - A dropped delivery is not counted in what qtbus_dispatch() returns (under
 *   DROP_OLDEST and LATEST the new one counts; the one it pushed out had counted when
 *   it was queued).  Its handler never sees it; the event's object_release still runs
 *   exactly once, after the last delivery that did happen; a dropped delivery of a
 *   request counts as that handler having finished (the request completes).  A ONCE
 *   subscription whose one delivery was dropped has ended all the same.
 * - Each drop is counted in qtbus_queue_stats.dropped, is a QTBUS_TRACE_DROP record on
 *   the hook of the subscription's bus (`function` names the rule:
 *   "QTBUS_OVERFLOW_DROP_NEWEST", ... ; "qtbus_bus_destroy" or "qtbus_queue_release"
 *   for a waiting dispatcher woken by them) and fires the `drop` USDT probe.  pending +
 *   delivered + dropped accounts for every delivery accepted (less those that left
 *   the wait because their subscription was disposed).
 * - FIFO among the deliveries kept; LATEST keeps the replaced delivery's place.  The
 *   queue's thread takes the deliveries it runs next a few at a time (at most 32):
 *   they still count as waiting until their handlers start.  LATEST does not replace
 *   those, nor deliveries queued before the queue had a limit.  When DROP_OLDEST or
 *   LATEST drops one of them, the drop is counted at once, and reported (the DROP
 *   record, the probe, the object released) on the queue's thread when it comes up.
 * - BLOCK waits on the dispatching thread, inside qtbus_dispatch(), with the handlers
 *   before that subscription already run.  Waiting dispatchers are served in the order
 *   they came, as room appears.  A dispatch is accepted beyond the capacity instead of
 *   waiting when it is made on the queue's own thread (by one of its handlers), on the
 *   main thread for the main queue, or by a replay (qtbus_subscribe() of a REPLAY
 *   subscription): none of those can wait for the queue.  qtbus_bus_destroy() wakes
 *   the bus's waiting dispatchers, qtbus_queue_release() all of them (their deliveries
 *   are dropped).  Two queues whose handlers dispatch into each other, both BLOCK with
 *   no timeout, can wait for each other forever: give one of them a timeout.  While a
 *   dispatcher waits, the memory of disposed subscriptions (of any bus) is not reused:
 *   it waits too.
 * - Memory: the queue's slots are allocated here, for `capacity` deliveries, with
 *   256-byte blocks for event copies (one per delivery the capacity allows, at most
 *   1,024, and 32 more).  A dispatch whose first queued delivery goes to the queue
 *   copies its event into a block when the bytes and names fit one (about 170 bytes
 *   together) and one is free, else with malloc; so in steady state a delivery of a
 *   small event allocates nothing, and a flood leaves the heap flat.  Beyond the
 *   capacity (the exceptions above, GROW) the slots grow.
 * A bounded created queue runs its waiting deliveries in one libdispatch item per
 * burst; the bounded main queue posts one item per delivery, so its deliveries stay in
 * FIFO with other main-queue work.
 *
 * Returns QTBUS_OK; QTBUS_EINVAL for a NULL queue, an unknown `overflow`, or a
 * capacity of 0 with a rule other than GROW (nothing changes); QTBUS_ENOMEM. */
QTBUS_API int qtbus_queue_set_limit(qtbus_queue *queue, size_t capacity, uint32_t overflow, int block_timeout_ms);

/* A queue's counts of deliveries (to subscriptions that use the queue, of every bus),
 * since the queue was made.  A delivery is waiting from its dispatch until its handler
 * starts (the one running is not waiting any more); one queued before its subscription
 * was disposed leaves the wait without a handler call. */
typedef struct qtbus_queue_stats {
    uint64_t pending;    /* deliveries waiting now */
    uint64_t high_water; /* the most that were ever waiting at once */
    uint64_t delivered;  /* handler calls made from this queue */
    uint64_t dropped;    /* deliveries dropped by the overflow rule (a BLOCK timeout,
                            a LATEST replacement included): qtbus_queue_set_limit() */
} qtbus_queue_stats;

/* Fills *out with `queue`'s counts (a created queue or qtbus_queue_main()); any
 * thread, at any time.  `high_water` is never below `pending`; under a bounding rule it
 * passes the capacity only through what waited when the limit was set and through
 * BLOCK's dispatches that may not wait (qtbus_queue_set_limit()).  A bounded queue's
 * counts are read under its lock, `pending` as it was at that instant; an unbounded
 * queue's one after the other, without a lock, so while deliveries come and go
 * `pending` may be off by those in passage.  Once the queue is idle, `delivered` +
 * `dropped` is every delivery made to it (less those that left the wait because their
 * subscription was disposed).  Returns QTBUS_OK; QTBUS_EINVAL for a NULL queue or out,
 * or a size below 32 (the struct in 0.2.0). */
QTBUS_API int qtbus_queue_stats_get_sized(qtbus_queue *queue, qtbus_queue_stats *out, size_t size);
/* 0.2.0's entry point, its qtbus_queue_stats of 32 bytes, kept for programs built
 * against it.  The macro makes a call by this name pass its size (STRUCTS THAT GROW). */
QTBUS_API int qtbus_queue_stats_get(qtbus_queue *queue, qtbus_queue_stats *out);
#define qtbus_queue_stats_get(queue, out) qtbus_queue_stats_get_sized((queue), (out), sizeof(qtbus_queue_stats))

/* A file descriptor that polls readable while main-queue work is pending: add it to
 * poll/epoll/GLib/libuv and call qtbus_main_drain() when it fires.  Owned by the
 * library: do not read or close it.  (It may rarely stay readable once with nothing
 * pending, after work that was posted while a drain was starting; the next drain then
 * returns 0 and clears it.) */
QTBUS_API int qtbus_main_fd(void);

/* Runs the main-queue work pending now (work posted meanwhile waits for the next
 * drain) on the calling thread, which must be the process's main thread.  Returns the
 * number of qtbus work items run (0 when none was pending; where the main queue is
 * DispatchQueue.main, work Swift code posted there runs too but is not counted), or
 * QTBUS_EINVAL, running
 * nothing, when called on another thread. */
QTBUS_API int qtbus_main_drain(void);

/* Waits until main-queue work is pending or `timeout_ms` passed (0: do not wait;
 * negative: wait without limit), then drains as qtbus_main_drain().  Main thread only:
 * QTBUS_EINVAL elsewhere. */
QTBUS_API int qtbus_main_wait(int timeout_ms);

/* ---------------------------------------------------------------------------------
 * Dispose bags
 *
 * A bag collects tokens and disposes all of them at once: give it the lifetime of the
 * object whose subscriptions it holds.
 * ------------------------------------------------------------------------------- */

/* Creates an empty bag.  QTBUS_EINVAL for a NULL bag_out, QTBUS_ENOMEM (bag_out
 * unchanged). */
QTBUS_API int qtbus_bag_create(qtbus_bag *bag_out);

/* Puts a live token in the bag.  A token is in at most one bag: adding it again to the
 * same bag does nothing (QTBUS_OK), adding it to another bag is QTBUS_EINVAL.
 * QTBUS_ESTALE when the bag or the token is not live, QTBUS_ENOMEM.  Tokens leave the
 * bag by themselves when they are disposed. */
QTBUS_API int qtbus_bag_add(qtbus_bag bag, qtbus_token token);

/* Disposes every token in the bag, then the bag itself (its id becomes stale). */
QTBUS_API int qtbus_bag_dispose(qtbus_bag bag);

/* ---------------------------------------------------------------------------------
 * Subscribing
 * ------------------------------------------------------------------------------- */

/* Delivered at most once, even when many threads dispatch at the same time; the
 * subscription is disposed as its delivery starts (inside its own handler its token is
 * already stale and it is no longer counted). */
#define QTBUS_SUB_ONCE (1u << 0)
/* On subscribing, receive the kept sticky event(s) that match (see QTBUS_EVENT_STICKY),
 * oldest first, before qtbus_subscribe() returns or, with a queue, first on that queue;
 * live events that arrive meanwhile follow them, so replay then live has no gap, no
 * duplicate and keeps order.  Except one: a dispatch a replayed handler makes itself is
 * nested in the replay and reaches it at once, depth-first, as inside any dispatch. */
#define QTBUS_SUB_REPLAY (1u << 1)
/* The type is a pattern over dot-separated tokens, NATS's subjects: "*" as a whole
 * token matches exactly one token, ">" as the last token one or more ("Order.*",
 * "Order.>", ">" for every event).  A wildcard inside a longer token is a literal
 * character ("Or*").  An empty token ("a..b", a leading or trailing ".") or ">" before
 * the last token is QTBUS_EINVAL.  An event's type is always literal: it is split on
 * "." into tokens (an empty one is a token too) and matched token by token.
 *   - Order: all the subscriptions an event reaches by priority, highest first; at equal
 *     priority the subtype-specific ones of its type, then the whole-type ones, then the
 *     pattern subscriptions (with or without subtypes), each group in subscription
 *     order.  Subtypes narrow a pattern subscription as they narrow a literal one; each
 *     subscription receives an event once.
 *   - A pattern subscription is an ordinary one: tokens, bags, queues, priorities, ONCE,
 *     stop, requests and the lifetime rules apply; an event it receives has reached
 *     someone (no QTBUS_NO_SUBSCRIBER_TYPE); qtbus_subscriber_count() of a literal type
 *     counts the pattern subscriptions its events reach; qtbus_bus_foreach() lists it
 *     (type: the pattern, flags: with QTBUS_SUB_PATTERN).
 *   - With QTBUS_SUB_REPLAY it replays the kept events of every type it matches
 *     (narrowed by its subtypes), oldest first across the types.
 *   - Cost: a bus that never had a pattern subscription dispatches as before; with
 *     patterns, a dispatch of a type it has seen costs one more lookup, a cached list of
 *     the patterns its events reach (a new pattern entry invalidates it). */
#define QTBUS_SUB_PATTERN (1u << 2)

/* The most subtypes one subscription may name (a larger subtype_count is QTBUS_EINVAL). */
#define QTBUS_MAX_SUBTYPES 4096

/* All-zero (memset or `= {0}`) means every default.  Pass NULL for the same. */
typedef struct qtbus_sub_options {
    const char *const *subtypes; /* subtype_count names; none: every event of the type */
    size_t subtype_count;
    qtbus_queue *queue; /* NULL: on the dispatching thread, before dispatch returns */
    qtbus_bag bag;      /* {0}: in no bag */
    int32_t priority;   /* higher first; equal priorities in subscription order */
    uint32_t flags;     /* QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY | QTBUS_SUB_PATTERN */
} qtbus_sub_options;

/* Subscribes `handler` to events of `type` on `bus`.
 *   - subtypes: the subscription receives only events carrying one of them (each event
 *     once, even if a name is listed twice); with none it receives every event of the
 *     type, with or without a subtype.
 *   - userdata is handed to every call of handler; release (nullable) frees it under
 *     lifetime rule 1.  The library copies `type` and the subtype names.
 *   - token_out (nullable) receives the token.  Without it the subscription lives until
 *     its bag is disposed, it fires (ONCE) or its bus is destroyed.
 *   - A subscription made during a dispatch does not receive that dispatch.
 * Returns QTBUS_OK; QTBUS_EINVAL (NULL bus/type/handler, bad name, subtypes NULL with a
 * count, more than QTBUS_MAX_SUBTYPES, unknown flag), QTBUS_ESTALE (options->bag not live), QTBUS_ECLOSED, QTBUS_ENOMEM.
 * On failure *token_out is set to {0}. */
QTBUS_API int qtbus_subscribe(qtbus_bus *bus, const char *type, const qtbus_sub_options *options, qtbus_handler handler,
                              void *userdata, qtbus_release release, qtbus_token *token_out);

/* Disposes one subscription (lifetime rules 1 and 2).  QTBUS_ESTALE when the token is
 * unknown, already disposed, fired (ONCE) or its bus was destroyed. */
QTBUS_API int qtbus_token_dispose(qtbus_token token);

/* 1 while the subscription is live (blocked or not: qtbus_token_block()), else 0
 * (never negative). */
QTBUS_API int qtbus_token_is_active(qtbus_token token);

/* The most times one token can be blocked at once (qtbus_token_block()). */
#define QTBUS_MAX_BLOCKS 65535

/* Blocks a subscription without disposing it, as GLib's g_signal_handler_block(): it
 * is blocked while it has been blocked more times than unblocked.  A dispatch made
 * while it is blocked leaves it out, as if it were not subscribed: its handler is not
 * called, no delivery is queued for it, it is not counted in what qtbus_dispatch()
 * or qtbus_request() returns.  An event whose subscriptions are all blocked
 * reaches nobody, so it becomes a QTBUS_NO_SUBSCRIBER_TYPE event as any such event does.
 *   - Which dispatches: one that begins after qtbus_token_block() returned (on the
 *     same thread, or on one that learned of the return through a lock, an atomic or
 *     a join), and the dispatches nested in it, leave it out.  One already in progress
 *     on another thread may still reach it, call it or queue a delivery for it: it
 *     found the subscription unblocked just before (as lifetime rule 2 says of
 *     dispose); the block does not wait for it.  The same holds for the unblock that
 *     ends a block: a dispatch that begins after it returned reaches the subscription.
 *   - What still runs: deliveries made before the block (queued ones not yet run, a
 *     REPLAY subscription's replay and the live events parked behind it) run as they
 *     would have, and a handler call in progress finishes.  A handler may block its own
 *     token: the call goes on, and the dispatches it makes afterwards leave it out.
 *   - Still live: qtbus_token_is_active() gives 1; qtbus_subscriber_count() and
 *     qtbus_bus_foreach() count it (they count subscriptions, not whom the next event
 *     reaches); an autoconnect source stays connected; qtbus_token_dispose(), its bag
 *     and its bus's destruction dispose it as any other, with no unblock first.
 *   - ONCE: a blocked ONCE subscription does not fire; it stays live and fires on the
 *     first event that reaches it once unblocked.  Against a dispatch in progress one
 *     of the two wins: the dispatch claimed it first (delivered once, disposed, and the
 *     block returns QTBUS_ESTALE), or the block did (not delivered).  An event replayed
 *     or parked for it before the block fires it all the same.
 *   - Every subscription alike: queued or not, with subtypes, patterns
 *     (QTBUS_SUB_PATTERN), typed signal connections (qtbus_signal_connect()), in a bag
 *     or not.  A bag is not blocked as a whole: block its tokens.
 *   - Cost: nothing for a program that never blocks (a blocked subscription is a state
 *     of the byte a dispatch reads anyway).  A block and the unblock that ends it make
 *     the type's next dispatches walk its list, until the second one has rebuilt the
 *     array it calls the handlers from.
 * Any thread, inside a handler too.  Returns QTBUS_OK; QTBUS_ESTALE when the token is
 * unknown ({0} included), disposed, fired (ONCE) or its bus destroyed; QTBUS_EINVAL
 * (nothing changes) when it is blocked QTBUS_MAX_BLOCKS times already. */
QTBUS_API int qtbus_token_block(qtbus_token token);

/* Undoes one qtbus_token_block(): the unblock that matches the first block makes
 * dispatches reach the subscription again (see qtbus_token_block(): "Which
 * dispatches").  Any thread, inside a handler too.  Returns QTBUS_OK; QTBUS_EINVAL
 * when the token is not blocked (an unblock too many: nothing changes); QTBUS_ESTALE
 * as qtbus_token_block() (a blocked token that was disposed is stale: there is
 * nothing left to unblock). */
QTBUS_API int qtbus_token_unblock(qtbus_token token);

/* How many live subscriptions an event would reach: with subtype NULL, every live
 * subscription of the type; with a subtype, the whole-type ones plus that subtype's.
 * Blocked ones (qtbus_token_block()) are live, and counted.
 * Returns the count (>= 0), or QTBUS_EINVAL / QTBUS_ECLOSED. */
QTBUS_API int qtbus_subscriber_count(qtbus_bus *bus, const char *type, const char *subtype);

/* One live subscription, as qtbus_bus_foreach() reports it.  The strings and the
 * array are the snapshot's: valid during the callback only. */
typedef struct qtbus_sub_info {
    qtbus_token token;
    const char *type;
    const char *const *subtypes; /* NULL when subtype_count is 0 (the whole type) */
    size_t subtype_count;
    int32_t priority;
    uint32_t flags; /* QTBUS_SUB_ONCE, QTBUS_SUB_REPLAY, QTBUS_SUB_PATTERN */
    int queued;     /* 1: delivered on a queue */
    int in_bag;     /* 1: in a bag */
} qtbus_sub_info;

/* Calls fn(info, userdata) once per live subscription of `bus`, on the calling thread,
 * type by type and in dispatch order within a type (priority, highest first, then
 * subscription order); a subscription with several subtypes is reported once.  It
 * reports a snapshot taken when the call starts, and holds no library lock while `fn`
 * runs, so `fn` may call the library (a subscription it disposes may still be reported
 * after; one it makes is not).  Returns how many it reported (>= 0), or QTBUS_EINVAL
 * (NULL bus or fn), QTBUS_ECLOSED, QTBUS_ENOMEM (the snapshot is one allocation). */
QTBUS_API int qtbus_bus_foreach(qtbus_bus *bus, void (*fn)(const qtbus_sub_info *info, void *userdata), void *userdata);

/* ---------------------------------------------------------------------------------
 * Tracing: a hook per bus that sees what the bus does
 *
 * The library also carries USDT probes (provider "qtbus": dispatch, deliver, subscribe,
 * dispose, release, drop; `readelf -n libqtbus.so` lists them) for bpftrace or perf to watch
 * a running program with no hook set and nothing rebuilt; docs/operations.md, "Tracing",
 * shows how. */

typedef enum qtbus_trace_kind {
    QTBUS_TRACE_DISPATCH = 1u << 0,  /* a dispatch finished */
    QTBUS_TRACE_DELIVER = 1u << 1,   /* one handler call finished */
    QTBUS_TRACE_SUBSCRIBE = 1u << 2, /* a subscription was made */
    QTBUS_TRACE_DISPOSE = 1u << 3,   /* a subscription ended */
    QTBUS_TRACE_RELEASE = 1u << 4,   /* a subscription's release hook ran */
    QTBUS_TRACE_MISUSE = 1u << 5,    /* a call naming the bus failed */
    QTBUS_TRACE_DROP = 1u << 6,      /* a bounded queue dropped a delivery */
    QTBUS_TRACE_ALL = (1u << 7) - 1
} qtbus_trace_kind;

/* One record; the fields a kind does not set are NULL or 0.  The strings are valid
 * during the hook's call only.
 *   DISPATCH   type, subtype (NULL: none), reached (handlers run or queued: what the
 *              dispatch returns, also in status), duration_ns (the whole dispatch: the
 *              synchronous handlers included).  A refused dispatch is not one: it is
 *              a MISUSE record.
 *   DELIVER    type, subtype, token, queued (1: on the subscription's queue, which
 *              may run it before the dispatch has returned, so this record can come
 *              before the dispatch's DISPATCH one; 0: on the dispatching thread,
 *              replays included), duration_ns (the handler's call).
 *   SUBSCRIBE  type, token.
 *   DISPOSE    type, token, function: how it ended: "qtbus_token_dispose",
 *              "qtbus_bag_dispose", "qtbus_bus_destroy", "QTBUS_SUB_ONCE" (its one
 *              event was delivered), or "owner gone" (a Swift freeWith owner).
 *   RELEASE    token (type is NULL: the type may be gone by then); only for a
 *              subscription that has a release hook, after the hook returned.
 *   MISUSE     function, status: a call that names this bus failed (what
 *              qtbus_errmsg() says on that thread tells why).  Calls that name no bus
 *              (a stale token or bag) have no bus to report to.
 *   DROP       type, subtype, token, function (the overflow rule, or the call that
 *              woke a waiting dispatcher): a bounded queue dropped a delivery to the
 *              subscription `token` (qtbus_queue_set_limit), on the dispatching
 *              thread. */
typedef struct qtbus_trace_record {
    uint32_t kind; /* one qtbus_trace_kind */
    const char *function;
    const char *type;
    const char *subtype;
    qtbus_token token;
    int status;
    int reached;
    int queued;
    uint64_t duration_ns; /* CLOCK_MONOTONIC */
} qtbus_trace_record;

typedef void (*qtbus_trace_fn)(const qtbus_trace_record *record, void *userdata);

/* Sets the trace hook of `bus`, replacing the one it had: fn(record, userdata) runs for
 * each record of the kinds in `kinds` (QTBUS_TRACE_* ored), on the thread where the
 * thing happened, after it happened, never under a library lock.  fn may call the
 * library; what it does is not traced (nothing is traced on a thread while a hook runs
 * there).  fn NULL removes the hook (kinds, userdata and release must then be 0/NULL).
 *
 * The replaced hook's release(userdata) runs exactly once, after its last call
 * returned (lifetime rule 1).  This waits for the calls of the replaced hook running
 * on other threads (do not call it while holding a lock the hook takes), so when it
 * returns no call of that hook is running or will start, and its release has run.
 * Called from inside a trace hook (any bus's), it cannot wait: the calls running on
 * other threads finish after it returns, and the last of them runs the release.
 * qtbus_bus_destroy() removes the bus's hook last, after the records of what it
 * disposed and released (a release deferred past it is not reported).
 *
 * With no hook set, tracing costs a dispatch nothing (the C benchmark shows it); with
 * one set, each record costs a call, and DISPATCH and DELIVER two clock reads.
 * Returns QTBUS_OK, QTBUS_EINVAL (NULL bus, unknown bits in kinds, or release/userdata/
 * kinds with fn NULL), QTBUS_ECLOSED, QTBUS_ENOMEM (nothing changed; release is not
 * called). */
QTBUS_API int qtbus_trace_set(qtbus_bus *bus, uint32_t kinds, qtbus_trace_fn fn, void *userdata, qtbus_release release);

/* For libraries built on qtbus (libqtbus-nats, qtbus_nats.h): reports a failure of
 * one of their calls as qtbus reports its own.  qtbus_errmsg() on this thread becomes
 * "function: reason" (reason NULL: qtbus_strerror(status)), QTBUS_DEBUG=misuse prints
 * it, and, when bus is not NULL, the bus's trace hook gets a MISUSE record (unless
 * this runs inside that hook).  `function` and `reason` are copied.  Returns `status`,
 * so `return qtbus_report(bus, "mylib_open", QTBUS_EIO, why);` works; QTBUS_EINVAL,
 * reported as this call's own failure, when function is NULL or status is not < 0. */
QTBUS_API int qtbus_report(qtbus_bus *bus, const char *function, int status, const char *reason);

/* Convenience: each is an expression whose value is the int status of a
 * qtbus_subscribe() on the shared bus, the token going into `bag`.
 *   QTBUS_SUB(bag, type, handler, userdata)        on the dispatching thread
 *   QTBUS_SUB_MAIN(bag, type, handler, userdata)   on the main queue
 *   QTBUS_SUB_JSON(bag, name, handler, userdata)   JSON events named `name`
 * The bag is the subscription's only handle, so it must be live: a bag of id 0 (never
 * created, e.g. `qtbus_bag bag = {0};`) is QTBUS_EINVAL and a disposed one QTBUS_ESTALE,
 * and nothing is subscribed.  On any failure qtbus_errmsg() starts with the macro's
 * name, followed by the reason ("QTBUS_SUB: the bag is {0} ...", or for what
 * qtbus_subscribe() refused, its own message: "QTBUS_SUB: qtbus_subscribe: the bag is
 * disposed or was never made"); QTBUS_DEBUG=misuse prints both lines.  To subscribe
 * with no bag at all, call qtbus_subscribe() with a token_out. */
#define QTBUS_SUB(bag, type, handler, userdata)                                                                        \
    qtbus__sub_in_bag("QTBUS_SUB", (bag), (type), NULL, NULL, (handler), (userdata))
#define QTBUS_SUB_MAIN(bag, type, handler, userdata)                                                                   \
    qtbus__sub_in_bag("QTBUS_SUB_MAIN", (bag), (type), NULL, qtbus_queue_main(), (handler), (userdata))
#define QTBUS_SUB_JSON(bag, name, handler, userdata)                                                                   \
    qtbus__sub_in_bag("QTBUS_SUB_JSON", (bag), QTBUS_JSON_TYPE, (name), NULL, (handler), (userdata))

/* ---------------------------------------------------------------------------------
 * Dispatching
 * ------------------------------------------------------------------------------- */

/* Keep this event as the last of its type and subtype for QTBUS_SUB_REPLAY
 * subscribers, until a newer one replaces it or qtbus_sticky_clear() drops it. */
#define QTBUS_EVENT_STICKY (1u << 0)
/* Never passed to a dispatch (QTBUS_EINVAL there): qtbus_event_flags() reports it for
 * an event that is a request (qtbus_request), which its handlers may answer. */
#define QTBUS_EVENT_REQUEST (1u << 1)

/* The type of JSON events (their subtype is the JSON name, their data the text). */
#define QTBUS_JSON_TYPE "QTJsonEvent"
/* The type of events that reached no subscription (subtype: the original type). */
#define QTBUS_NO_SUBSCRIBER_TYPE "QTNoSubscriberEvent"

/* The desc's `headers` and `header_count` are set (since 0.3.0).  See "Event headers"
 * below for what headers are and the rules they follow. */
#define QTBUS_EVENT_HEADERS (1u << 2)

/* One event header: a name and its value, NUL-terminated; rules under "Event headers". */
typedef struct qtbus_header {
    const char *name;
    const char *value;
} qtbus_header;

/* What a dispatch is given.  The struct grew in 0.3.0 by its last two fields, under the
 * flag QTBUS_EVENT_HEADERS: the library reads `headers` and `header_count` only when
 * `flags` has that bit, and without it never reads past `flags` (0.2.0's struct, 56
 * bytes on LP64), not even to copy the struct whole.  So a program built against
 * 0.2.0's header, whose descs are that size, keeps working unchanged. */
typedef struct qtbus_event_desc {
    const char *type;             /* required */
    const char *subtype;          /* optional */
    const void *data;             /* borrowed during the call; copied once if any delivery is queued */
    size_t size;                  /* data may be NULL only with size 0 */
    void *object;                 /* optional pointer payload, owned by a successful dispatch */
    qtbus_release object_release; /* nullable; runs exactly once, after the last delivery */
    uint32_t flags;               /* QTBUS_EVENT_STICKY, QTBUS_EVENT_HEADERS */
    /* 0.3.0, read only when flags has QTBUS_EVENT_HEADERS: */
    const qtbus_header *headers; /* header_count of them, borrowed during the call (copied) */
    size_t header_count;         /* 0 to 32; headers may be NULL only with 0 */
} qtbus_event_desc;

/* Delivers `event` to every matching subscription of `bus`:
 *   - order: by priority, highest first; at equal priority the subtype-specific
 *     subscriptions before the whole-type ones; each group in subscription order; each
 *     subscription receives the event once.  A handler may end the delivery with
 *     qtbus_event_stop().
 *   - handlers without a queue run now, on this thread; queued ones are posted.
 *   - a dispatch made inside a handler is delivered at once, depth-first.
 *   - an event that reaches no subscription is dispatched as QTBUS_NO_SUBSCRIBER_TYPE
 *     (subtype = its type, same data), if anyone subscribes to that.
 *   - a successful dispatch owns event->object: object_release runs exactly once, after
 *     the last delivery (queued ones included) or at once when nobody receives it; when
 *     every delivery was synchronous it has run before qtbus_dispatch returns.  For a
 *     sticky event, only after it is also replaced or cleared and its replays are done.
 *   - only a QTBUS_EVENT_STICKY dispatch keeps or replaces the kept event of its type
 *     and subtype; a plain dispatch leaves it alone.
 * Returns the number of subscriptions run synchronously plus those queued (>= 0; 0 when
 * the event went to QTBUS_NO_SUBSCRIBER_TYPE subscribers instead), or
 * QTBUS_EINVAL (NULL, bad names, data NULL with size > 0, unknown flag, headers that
 * break the rules of "Event headers"), QTBUS_ECLOSED, QTBUS_ENOMEM; on failure
 * object_release is not called. */
QTBUS_API int qtbus_dispatch(qtbus_bus *bus, const qtbus_event_desc *event);

/* Type ids, for hot loops: GLib's signal ids (g_signal_lookup) for this bus.  A
 * dispatch by name measures, hashes and looks up the name each time; resolve it once
 * and dispatch by id instead:
 *
 *     qtbus_type_id tick;
 *     qtbus_type_lookup(bus, "Tick", &tick);                    // once
 *     qtbus_event_desc e = { .data = &sample, .size = sizeof sample };
 *     for (;;) qtbus_dispatch_id(bus, tick, &e);                // event->type not read
 *
 * An id is valid on its bus for as long as the bus lives (types are never forgotten);
 * the same name gives the same id.  An id is bound to its bus: one used on another bus
 * (or made by a bus since destroyed) is refused with QTBUS_EINVAL, as is 0 or one never
 * made; never a crash. */
typedef struct {
    uint64_t id;
} qtbus_type_id;

/* The id of `type` on `bus`; the bus makes the type if it has not seen it yet (an
 * empty one: nothing is subscribed by this).  QTBUS_OK with *out set; QTBUS_EINVAL
 * (NULL bus or out, bad name), QTBUS_ECLOSED, QTBUS_ENOMEM.  On failure *out, when not
 * NULL, is {0}. */
QTBUS_API int qtbus_type_lookup(qtbus_bus *bus, const char *type, qtbus_type_id *out);

/* qtbus_dispatch() of `event` as an event of the type `type` stands for: everything
 * qtbus_dispatch() says holds (subtype, data, object, QTBUS_EVENT_STICKY, order,
 * return value); event->type is not read.  QTBUS_EINVAL also for an id of another bus,
 * 0, or one never made. */
QTBUS_API int qtbus_dispatch_id(qtbus_bus *bus, qtbus_type_id type, const qtbus_event_desc *event);

/* Copies the event and returns QTBUS_OK at once; the bus's own serial queue then
 * dispatches it as qtbus_dispatch() would.  Posts are delivered in the order they were
 * made, per bus.  QTBUS_EINVAL, QTBUS_ECLOSED, QTBUS_ENOMEM as qtbus_dispatch(). */
QTBUS_API int qtbus_dispatch_on_bus_queue(qtbus_bus *bus, const qtbus_event_desc *event);

/* Same, but the dispatch runs on the main queue (when the main thread drains it). */
QTBUS_API int qtbus_dispatch_on_main(qtbus_bus *bus, const qtbus_event_desc *event);

/* The deepest nesting of arrays and objects qtbus_dispatch_json() accepts (RFC 8259
 * allows a limit); deeper text is QTBUS_EJSON. */
#define QTBUS_JSON_MAX_DEPTH 10000

/* Dispatches a JSON event: type QTBUS_JSON_TYPE, subtype `name`, data the text
 * (NUL-terminated, size excluding the NUL; copied, still NUL-terminated, for queued
 * deliveries).  The text is validated against RFC 8259 first (UTF-8, any value at top
 * level, nesting up to QTBUS_JSON_MAX_DEPTH): QTBUS_EJSON and nothing delivered when
 * it is not JSON.  Returns as qtbus_dispatch() (QTBUS_ENOMEM included). */
QTBUS_API int qtbus_dispatch_json(qtbus_bus *bus, const char *name, const char *json);

/* Drops the kept sticky events of `type` with `subtype`, or of every subtype when
 * subtype is NULL (the event kept without a subtype included).  Returns how many were
 * dropped (>= 0), or QTBUS_EINVAL / QTBUS_ECLOSED. */
QTBUS_API int qtbus_sticky_clear(qtbus_bus *bus, const char *type, const char *subtype);

/* ---------------------------------------------------------------------------------
 * The event a handler receives (valid only during the callback)
 * ------------------------------------------------------------------------------- */
QTBUS_API const char *qtbus_event_type(const qtbus_event *event);    /* NULL for NULL */
QTBUS_API const char *qtbus_event_subtype(const qtbus_event *event); /* NULL when none */
/* The bytes (NULL when size is 0); *size_out (nullable) receives the size. */
QTBUS_API const void *qtbus_event_data(const qtbus_event *event, size_t *size_out);
QTBUS_API void *qtbus_event_object(const qtbus_event *event);
/* No later handler of this dispatch receives the event (synchronous handlers are not
 * run, queued ones not posted).  QTBUS_EINVAL for NULL, and for an event whose
 * dispatch has already finished: one delivered on a queue, or replayed to a
 * QTBUS_SUB_REPLAY subscription (a replay reaches one subscription only, so there is
 * no later handler to spare), or a command's input or a reply. */
QTBUS_API int qtbus_event_stop(const qtbus_event *event);
/* QTBUS_EVENT_STICKY when the event was dispatched sticky (its replays included),
 * QTBUS_EVENT_REQUEST when it is a request; 0 for NULL and for a reply. */
QTBUS_API uint32_t qtbus_event_flags(const qtbus_event *event);

/* ---------------------------------------------------------------------------------
 * Event headers (0.3.0)
 *
 * Short name/value text pairs that travel with an event wherever it goes, so that an
 * application (or OpenTelemetry, with W3C Trace Context's `traceparent`, `tracestate`
 * and `baggage`) can follow one causal chain across threads, queues and processes.
 * A dispatch is given them in its desc, with QTBUS_EVENT_HEADERS in flags:
 *
 *     qtbus_header h[] = { { "traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-"
 *                                          "00f067aa0ba902b7-01" } };
 *     qtbus_dispatch(bus, &(qtbus_event_desc){ .type = "Order", .data = o, .size = n,
 *                    .flags = QTBUS_EVENT_HEADERS, .headers = h, .header_count = 1 });
 *
 * The rules (anything else is QTBUS_EINVAL, with qtbus_errmsg() naming the function
 * called and the reason, nothing dispatched, and event->object not taken, as for any
 * failed dispatch):
 *   - a name is 1 to 64 bytes of RFC 9110 token characters (letters, digits and
 *     !#$%&'*+-.^_`|~), compared exactly: case-sensitive (W3C's names are lower case).
 *     A name starting "Qtbus-", in any letter case, is the NATS bridge's own and is
 *     refused.
 *   - a value is 0 to 4,096 bytes of valid UTF-8 (RFC 3629: no overlong forms, no
 *     surrogates, nothing above U+10FFFF) without CR or LF.  NULL is not a value.
 *   - a name given twice: the last value wins, at the name's first place.
 *   - at most 32 headers, and at most 16,384 bytes of names and values together, per
 *     event: counted on what the dispatch was given after that merge (inherited
 *     headers, below, do not count).
 *   - headers NULL with header_count > 0 is refused; header_count 0 is no headers.
 * The library copies them (as it copies `data`), so the caller's strings may go when
 * the dispatch returns.
 *
 * Delivery: the headers reach every delivery of the event: synchronous and queued
 * handlers, bounded queues (with QTBUS_OVERFLOW_LATEST the replacing event's headers),
 * a sticky event's replays, a request's handlers, QTBUS_NO_SUBSCRIBER_TYPE deliveries,
 * and a command's execution (qtbus_command_execute's input).  A reply carries none.
 *
 * Causal context, automatic: while a handler runs, on any thread or queue, a dispatch
 * of any form made on that thread (qtbus_dispatch, _id, _on_bus_queue, _on_main,
 * qtbus_request, qtbus_signal_emit and _emitv, qtbus_command_execute) that does not set
 * a header named `traceparent`, `tracestate` or `baggage` inherits that header's value
 * from the event being handled:
 *   - from the innermost event when handlers nest, and only from it: a name the
 *     innermost event lacks is not taken from an outer one;
 *   - a header set explicitly, even to the empty string, is not replaced;
 *   - "a handler runs" is every call the library makes with an event: subscription
 *     handlers (the main queue's included), replays, typed-signal handlers, and a
 *     command's execute function with its input;
 *   - a posted dispatch (_on_bus_queue, _on_main) inherits at the call, not when its
 *     queue runs it;
 *   - no other header is inherited, and a dispatch made outside any handler inherits
 *     nothing.
 * Inherited headers come after the given ones (qtbus_event_header_at's order) and do
 * not count against the limits.  A program that uses no headers pays at most a few
 * instructions per dispatch for this.
 *
 * The NATS bridge carries them as NATS message headers both ways (qtbus_nats.h).
 * ------------------------------------------------------------------------------- */

/* The value of the header `name` of `event` (given or inherited), or NULL when it has
 * none (or for a NULL argument).  Valid while the handler runs, as the event is. */
QTBUS_API const char *qtbus_event_header(const qtbus_event *event, const char *name);

/* How many headers `event` has, inherited ones included (0 for NULL and for a reply). */
QTBUS_API size_t qtbus_event_header_count(const qtbus_event *event);

/* The header at `index`, in the order the dispatch was given them (a repeated name once,
 * with its last value, at its first place), then the inherited ones.  QTBUS_OK with
 * *name_out and *value_out set (valid while the handler runs); QTBUS_EINVAL for a NULL
 * argument or an index past the end. */
QTBUS_API int qtbus_event_header_at(const qtbus_event *event, size_t index, const char **name_out,
                                    const char **value_out);

/* ---------------------------------------------------------------------------------
 * Request and reply
 *
 * A request is a dispatch whose handlers can answer the sender.  The sender picks
 * synchronous or queued processing per receiver the same way as for events: receivers
 * subscribed without a queue run inside qtbus_request(), those with a queue run there.
 *
 *     static void on_login(const qtbus_event *e, void *u) {       // the auth service
 *         qtbus_event_reply(e, "login ok", 8);
 *     }
 *     qtbus_request(bus, &(qtbus_event_desc){ .type = "Login", .data = json, .size = n },
 *                   on_reply, state, done);                       // done(state): completion
 * ------------------------------------------------------------------------------- */

/* Receives one reply: type and subtype are the request's, data the bytes the handler
 * passed (valid only during the call), no object.  A reply cannot be stopped or replied
 * to.  It runs on the replying thread: with handlers on several queues, replies can
 * arrive on several threads at once. */
typedef void (*qtbus_reply_handler)(const qtbus_event *reply, void *userdata);

/* Dispatches `event` as qtbus_dispatch() does (order, priorities, subtypes, stop,
 * queues, object ownership, QTBUS_NO_SUBSCRIBER_TYPE) with the request attached to
 * every delivery, queued ones included.
 *   - on_reply (nullable: completion only) runs once per qtbus_event_reply(), at once.
 *   - release(userdata) (nullable) is the completion: it runs exactly once, after the
 *     last handler that received the request has returned (queued ones and a replaying
 *     subscriber's late delivery included), on that handler's thread; when every
 *     handler was synchronous it has run before qtbus_request returns.  After it, no
 *     reply comes.  A request that reaches nobody completes at once.
 *   - an event redirected to QTBUS_NO_SUBSCRIBER_TYPE is not a request (replying to it
 *     is QTBUS_EINVAL), and the request returns 0.
 * Returns the number of handlers reached (as qtbus_dispatch), or QTBUS_EINVAL (as
 * qtbus_dispatch, and for QTBUS_EVENT_STICKY: a request completes, it cannot be kept
 * for later subscribers), QTBUS_ECLOSED, QTBUS_ENOMEM; on failure neither release
 * nor object_release is called. */
QTBUS_API int qtbus_request(qtbus_bus *bus, const qtbus_event_desc *event, qtbus_reply_handler on_reply, void *userdata,
                            qtbus_release release);

/* From inside a handler of a request: answers it.  on_reply runs before this returns
 * and sees these `size` bytes in place (not copied).  May be called zero or more times
 * per handler.  QTBUS_OK; QTBUS_EINVAL for NULL, an event that is not a request (plain
 * dispatch, reply, command input) or data NULL with size > 0. */
QTBUS_API int qtbus_event_reply(const qtbus_event *event, const void *data, size_t size);

/* Answering later.  A handler that cannot answer before it returns (it asked another
 * thread, process or machine) defers: the request stays open, its completion waiting,
 * until the deferred reply is finished; meanwhile qtbus_deferred_reply() answers it
 * from any thread, as qtbus_event_reply() would (on_reply runs at once, on that
 * thread, with the request's type and subtype).  A deferred reply that is never
 * finished keeps its request from completing: finish each one exactly once. */
typedef struct {
    uint64_t id;
} qtbus_deferred;

/* From inside a handler of a request (queued handlers too).  QTBUS_OK and *out set;
 * QTBUS_EINVAL for a NULL event or out, or an event that is not a request; QTBUS_ENOMEM.
 * On failure *out, when not NULL, is {0}. */
QTBUS_API int qtbus_event_defer(const qtbus_event *event, qtbus_deferred *out);
/* QTBUS_OK; QTBUS_ESTALE when finished or never made; QTBUS_EINVAL for data NULL with
 * size > 0. */
QTBUS_API int qtbus_deferred_reply(qtbus_deferred deferred, const void *data, size_t size);
/* Ends it: when it was the last thing the request waited for, the completion
 * (release(userdata)) runs now, on this thread.  QTBUS_OK; QTBUS_ESTALE when already
 * finished or never made. */
QTBUS_API int qtbus_deferred_finish(qtbus_deferred deferred);

/* ---------------------------------------------------------------------------------
 * Typed signals
 *
 * GLib's typed signals for this bus: declare the argument kinds of a type once per
 * bus, emit with arguments, and connect plain C functions that take them.
 *
 *     static void on_login(const char *user, int32_t attempts, void *userdata) { ... }
 *     static const qtbus_arg login_args[] = { QTBUS_ARG_STRING, QTBUS_ARG_INT32 };
 *     qtbus_signal_define(bus, "Login", login_args, 2);
 *     qtbus_signal_connect(bus, "Login", NULL, QTBUS_CALLBACK(on_login), NULL, NULL, &token);
 *     qtbus_signal_emit(bus, "Login", NULL, "alice", (int32_t)3);
 *
 * A signal event is an ordinary event of its type, whose bytes hold the arguments
 * (layout below): subtypes, priorities, queues, bags, ONCE, REPLAY and sticky events,
 * qtbus_event_stop(), QTBUS_NO_SUBSCRIBER_TYPE and the lifetime rules apply as to any
 * event, and plain qtbus_subscribe() handlers of the type receive it too and read the
 * arguments with qtbus_event_args().
 *
 * What C cannot check, and the library therefore cannot either: that a connected
 * handler really has the parameters of the signature (a handler with other
 * parameters is called with the signature's, which is undefined behaviour), and that
 * the arguments given to qtbus_signal_emit() have the signature's C types (a literal
 * 3 where an int64_t is expected is read as 64 bits, of which 32 are garbage).  Cast
 * literals in the call, or use qtbus_signal_emitv(), whose qtbus_value makes the type
 * explicit.  Everything else is checked: a misuse is a status, never a crash.
 *
 * The bytes of a signal event (what qtbus_event_data() returns; 8-byte units, native
 * byte order):
 *     0   "QTSG"                    magic
 *     4   uint8_t  version          QTBUS_SIGNAL_LAYOUT_VERSION
 *     5   uint8_t  count            0 to QTBUS_SIGNAL_MAX_ARGS
 *     6   uint16_t 0
 *     8   uint8_t  kinds[count]     qtbus_arg values, zero-padded to a multiple of 8
 *     .   8-byte slots[count]       the qtbus_value of each argument; for a string, the
 *                                   uint64_t offset of its bytes from byte 0 (0: NULL)
 *     .   the strings               each NUL-terminated, in argument order, one after
 *                                   the other
 * Offsets instead of pointers, so the copy made for queued deliveries is valid as is.
 * Readers (qtbus_event_args, connected handlers) check all of it, every offset and
 * NUL included, so any bytes are safe to hand them.
 * ------------------------------------------------------------------------------- */

/* The argument kinds, with the C type each is passed as. */
typedef enum qtbus_arg {
    QTBUS_ARG_INT32 = 1,  /* int32_t */
    QTBUS_ARG_UINT32 = 2, /* uint32_t */
    QTBUS_ARG_INT64 = 3,  /* int64_t */
    QTBUS_ARG_UINT64 = 4, /* uint64_t */
    QTBUS_ARG_DOUBLE = 5, /* double */
    QTBUS_ARG_STRING = 6, /* const char *: copied into the event; NULL stays NULL */
    QTBUS_ARG_POINTER = 7 /* void *: passed as is, never owned or dereferenced */
} qtbus_arg;

/* One argument; the member read is the one its kind names. */
typedef union qtbus_value {
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    double f64;
    const char *str;
    void *ptr;
} qtbus_value;

/* The most arguments a signature may have. */
#define QTBUS_SIGNAL_MAX_ARGS 16
/* The version byte of the layout above. */
#define QTBUS_SIGNAL_LAYOUT_VERSION 1

/* The handler argument of qtbus_signal_connect: any function pointer, converted. */
#define QTBUS_CALLBACK(f) ((void (*)(void))(f))

/* Declares that events of `type` on `bus` carry `count` (0 to QTBUS_SIGNAL_MAX_ARGS)
 * arguments of the kinds `args` (copied; NULL when count is 0).  A signature lives as
 * long as its bus and never changes: defining the same one again returns QTBUS_OK, a
 * different one QTBUS_EINVAL.  Returns QTBUS_OK; QTBUS_EINVAL (NULL bus/type, bad
 * name, args NULL with a count, too many, an unknown kind, a different signature),
 * QTBUS_ECLOSED, QTBUS_ENOMEM. */
QTBUS_API int qtbus_signal_define(qtbus_bus *bus, const char *type, const qtbus_arg *args, size_t count);

/* Subscribes `handler`, called as handler(arg1, ..., argN, userdata) with the C types
 * of the signature's kinds and returning void, to events of `type` as qtbus_subscribe()
 * does (options, release under lifetime rule 1, token_out).  Strings are valid during
 * the call.  An event of the type whose bytes are not arguments of this signature (a
 * plain qtbus_dispatch() of the type) does not call it.  Returns as qtbus_subscribe(),
 * and QTBUS_EINVAL when `type` has no signature on `bus`. */
QTBUS_API int qtbus_signal_connect(qtbus_bus *bus, const char *type, const qtbus_sub_options *options,
                                   void (*handler)(void), void *userdata, qtbus_release release,
                                   qtbus_token *token_out);

/* Dispatches an event of `type` with `subtype` (nullable) whose arguments follow, in
 * signature order, with the C types of their kinds (see above: not checkable).  The
 * arguments are packed once, without allocating when they fit in 512 bytes (strings
 * included); a queued delivery copies them once.  Returns what qtbus_dispatch()
 * returns, and QTBUS_EINVAL when `type` has no signature on `bus`. */
QTBUS_API int qtbus_signal_emit(qtbus_bus *bus, const char *type, const char *subtype, ...);

/* The same with the arguments as values, `count` of them (must be the signature's:
 * else QTBUS_EINVAL), and dispatch flags (QTBUS_EVENT_STICKY). */
QTBUS_API int qtbus_signal_emitv(qtbus_bus *bus, const char *type, const char *subtype, uint32_t flags,
                                 const qtbus_value *args, size_t count);

/* A typed request: packs the arguments as qtbus_signal_emitv() does, then is
 * qtbus_request() (handlers that subscribed with qtbus_subscribe() read the arguments
 * with qtbus_event_args() and answer with qtbus_event_reply(); connected handlers are
 * called too, but cannot reply).  Returns as qtbus_request(), and QTBUS_EINVAL as
 * qtbus_signal_emitv(). */
QTBUS_API int qtbus_signal_requestv(qtbus_bus *bus, const char *type, const char *subtype, const qtbus_value *args,
                                    size_t count, qtbus_reply_handler on_reply, void *userdata, qtbus_release release);

/* Reads the arguments of a signal event into args_out[0..n) (strings point into the
 * event's bytes: valid during the callback).  Returns the argument count n (>= 0);
 * QTBUS_EINVAL for NULL, an event whose bytes are not a signal's (checked: any bytes
 * are safe to pass), or `count` smaller than n (args_out untouched then).  The values
 * are read by the kinds the bytes carry, which are the type's signature unless someone
 * dispatched other bytes on the type with qtbus_dispatch(): a handler that must not
 * trust that checks the kinds (bytes 8 to 8 + n of qtbus_event_data) before reading a
 * string. */
QTBUS_API int qtbus_event_args(const qtbus_event *event, qtbus_value *args_out, size_t count);

/* Whether `data` (`size` bytes; NULL is none) are arguments of exactly the signature
 * `kinds` (`count` of them; NULL when count is 0): 1 when they are, 0 when they are not.
 * Checked as qtbus_event_args() and connected handlers check them, every offset and NUL
 * included, so any bytes are safe to pass, and a 1 means every string offset in them
 * points at a NUL-terminated string inside them.  For code that reads a signal event's
 * bytes itself (a plain handler that must not trust the kinds, a binding: qtbus.hpp's
 * slots call it).  A query: a 0 is an answer, not a failure, so it reports nothing
 * (qtbus_errmsg() unchanged); an unknown kind or a count over QTBUS_SIGNAL_MAX_ARGS
 * is a signature no bytes match.  Any thread; no bus. */
QTBUS_API int qtbus_signal_check(const void *data, size_t size, const qtbus_arg *kinds, size_t count);

/* ---------------------------------------------------------------------------------
 * Commands
 *
 * A named action with observable state.  A command publishes on its bus, with the
 * command's name as subtype (subscribe to the type with that subtype to observe one
 * command):
 *   QTBUS_COMMAND_EXECUTING_TYPE  data "1" when it goes from idle to executing, "0"
 *                                 when its last running execution finishes (one pair
 *                                 however many executions overlap)
 *   QTBUS_COMMAND_VALUE_TYPE      each qtbus_execution_send(), data = the bytes sent
 *   QTBUS_COMMAND_ERROR_TYPE      each finish with error != 0, data = the message
 *                                 (empty when NULL), published before its "0"
 *   QTBUS_COMMAND_ENABLED_TYPE    data "1"/"0" when qtbus_command_is_enabled()'s value
 *                                 changes (disabled, or busy while not concurrent);
 *                                 not published at creation (it starts enabled)
 * Order: one command's events are delivered one at a time, in the order of the calls
 * that made them.  Each is delivered inside the call that made it, on its thread --
 * unless another thread is delivering this command's events at that moment; then that
 * thread delivers it next and the call returns without waiting.  (So a handler that
 * executes the command again sees the new events after it returns, never nested.)
 * Several commands may share a name on one bus; their events then share a subtype.
 * ------------------------------------------------------------------------------- */
#define QTBUS_COMMAND_CONCURRENT (1u << 0) /* executions may overlap */

#define QTBUS_COMMAND_EXECUTING_TYPE "QTCommandExecuting"
#define QTBUS_COMMAND_VALUE_TYPE "QTCommandValue"
#define QTBUS_COMMAND_ERROR_TYPE "QTCommandError"
#define QTBUS_COMMAND_ENABLED_TYPE "QTCommandEnabled"

/* Runs one execution.  `input` is the event given to qtbus_command_execute (NULL when
 * none was), valid during the call; it cannot be stopped or replied to.  The function
 * sends values and finishes `execution`, now or later, from any thread. */
typedef void (*qtbus_execute_fn)(const qtbus_event *input, qtbus_execution execution, void *userdata);

/* Creates an enabled, idle command named `name` (a name as for events) on `bus`.
 * release(userdata) (nullable) runs exactly once, after qtbus_command_dispose() (or
 * the bus's destroy) and after the last call of `execute` has returned, with lifetime
 * rule 1's timing.  Returns QTBUS_OK; QTBUS_EINVAL (NULL bus/name/execute/out, bad
 * name, unknown flag), QTBUS_ECLOSED, QTBUS_ENOMEM.  On failure *out is {0}. */
QTBUS_API int qtbus_command_create(qtbus_bus *bus, const char *name, uint32_t flags, qtbus_execute_fn execute,
                                   void *userdata, qtbus_release release, qtbus_command *out);

/* Starts an execution: "1" is published if the command was idle, then `execute` runs
 * -- now, on this thread, before this returns, when queue is NULL; else on `queue`
 * (the input is copied; an execution still queued when the command is disposed never
 * runs).  `input` (nullable) is checked as for qtbus_dispatch (QTBUS_EVENT_STICKY is
 * QTBUS_EINVAL); its object is owned by a successful call and released after
 * `execute` returned.  Returns QTBUS_OK; QTBUS_EBUSY, running nothing, when the
 * command is disabled or executing and not concurrent; QTBUS_ESTALE, QTBUS_EINVAL,
 * QTBUS_ECLOSED, QTBUS_ENOMEM. */
QTBUS_API int qtbus_command_execute(qtbus_command command, const qtbus_event_desc *input, qtbus_queue *queue);

/* Enables (non-zero) or disables the command.  Running executions go on; a disabled
 * command refuses execute with QTBUS_EBUSY.  QTBUS_OK or QTBUS_ESTALE. */
QTBUS_API int qtbus_command_set_enabled(qtbus_command command, int enabled);

/* 1 while at least one execution runs (started, not finished), else 0; QTBUS_ESTALE. */
QTBUS_API int qtbus_command_is_executing(qtbus_command command);

/* 1 when qtbus_command_execute would start an execution now (enabled, and idle unless
 * concurrent), else 0; QTBUS_ESTALE. */
QTBUS_API int qtbus_command_is_enabled(qtbus_command command);

/* Publishes QTBUS_COMMAND_VALUE_TYPE with `size` bytes (copied).  QTBUS_OK;
 * QTBUS_ESTALE once the execution finished or its command was disposed; QTBUS_EINVAL
 * for data NULL with size > 0. */
QTBUS_API int qtbus_execution_send(qtbus_execution execution, const void *data, size_t size);

/* Finishes the execution, exactly once: error 0 is success; otherwise
 * QTBUS_COMMAND_ERROR_TYPE is published with `message` (nullable, copied) first.  Then
 * "0" if it was the last running one.  QTBUS_OK; QTBUS_ESTALE when already finished
 * or its command was disposed. */
QTBUS_API int qtbus_execution_finish(qtbus_execution execution, int error, const char *message);

/* Disposes the command: later calls with it return QTBUS_ESTALE, and so do running
 * executions' later sends and finishes (their `execute` calls are not interrupted;
 * nothing more is published).  Events already made are still delivered.  QTBUS_OK or
 * QTBUS_ESTALE. */
QTBUS_API int qtbus_command_dispose(qtbus_command command);

/* ---------------------------------------------------------------------------------
 * Shared sources
 *
 * A source's side effect (a socket, a timer, a file watch) that dispatches events of
 * `type`: it is started once per connection however many subscribers there are.
 * `start` and `stop` of one source never overlap and strictly alternate (start, stop,
 * start...).  Each runs inside the call that caused it, on its thread -- unless another
 * thread is running this source's start or stop at that moment; then that thread runs
 * it next and the call returns without waiting.
 * ------------------------------------------------------------------------------- */
#define QTBUS_SOURCE_AUTOCONNECT (1u << 0)

typedef void (*qtbus_source_start)(qtbus_bus *bus, void *userdata);
typedef void (*qtbus_source_stop)(void *userdata);

/* Creates a disconnected source of events of `type` on `bus`.  With
 * QTBUS_SOURCE_AUTOCONNECT the source follows the type's live subscriptions (any
 * subtype, any queue): the first one connects it (inside that qtbus_subscribe, before
 * it returns and before its replay; at once inside this call if subscriptions already
 * exist), the dispose of the last one (or its ONCE firing, its bag, its bus's destroy)
 * disconnects it, and a later first subscriber connects it again.  Explicit connect and
 * disconnect work too.  `start` is required, `stop` nullable.  release(userdata)
 * (nullable) runs exactly once, after qtbus_source_dispose() (or the bus's destroy)
 * and the stop that follows it.  Returns QTBUS_OK; QTBUS_EINVAL (NULL bus/type/start/
 * out, bad name, unknown flag), QTBUS_ECLOSED, QTBUS_ENOMEM.  On failure *out is {0}. */
QTBUS_API int qtbus_source_create(qtbus_bus *bus, const char *type, uint32_t flags, qtbus_source_start start,
                                  qtbus_source_stop stop, void *userdata, qtbus_release release, qtbus_source *out);

/* Runs start if the source is not connected; does nothing if it is.  QTBUS_OK or
 * QTBUS_ESTALE. */
QTBUS_API int qtbus_source_connect(qtbus_source source);

/* Runs stop if the source is connected; a later connect starts it again.  QTBUS_OK or
 * QTBUS_ESTALE. */
QTBUS_API int qtbus_source_disconnect(qtbus_source source);

/* Disconnects the source if connected (stop runs), then releases it.  QTBUS_OK or
 * QTBUS_ESTALE. */
QTBUS_API int qtbus_source_dispose(qtbus_source source);

/* ---------------------------------------------------------------------------------
 * Internal helper behind the QTBUS_SUB* macros; not API.
 * ------------------------------------------------------------------------------- */
static inline int qtbus__sub_in_bag(const char *macro, qtbus_bag bag, const char *type, const char *subtype,
                                    qtbus_queue *queue, qtbus_handler handler, void *userdata)
{
    const char *subtypes[1];
    qtbus_sub_options options;
    int status;
    /* {0} means "in no bag" to qtbus_subscribe(), which with no token_out would leave a
     * subscription on the shared bus that nothing can dispose. */
    if (bag.id == 0)
        return qtbus_report(qtbus_shared(), macro, QTBUS_EINVAL,
                            "the bag is {0} (never created with qtbus_bag_create): nothing could "
                            "dispose the subscription, so none was made");
    subtypes[0] = subtype;
    options.subtypes = subtype ? subtypes : NULL;
    options.subtype_count = subtype ? 1u : 0u;
    options.queue = queue;
    options.bag = bag;
    options.priority = 0;
    options.flags = 0;
    status = qtbus_subscribe(qtbus_shared(), type, &options, handler, userdata, NULL, NULL);
    /* The message names what the caller wrote, the macro, before qtbus_subscribe's own.
     * No bus: qtbus_subscribe's failure already gave the shared bus its MISUSE record. */
    if (status < 0) qtbus_report(NULL, macro, status, qtbus_errmsg());
    return status;
}

#ifdef __cplusplus
}
#endif

#endif /* QTBUS_H */
