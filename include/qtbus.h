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
 *   2. After qtbus_token_dispose() (or qtbus_bag_dispose()) returns, the handler is
 *      never started again, queued deliveries included.  An invocation already running
 *      on another thread finishes; dispose does not wait for it and cannot deadlock.
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
#  define QTBUS_API __attribute__((visibility("default")))
#else
#  define QTBUS_API
#endif

#define QTBUS_VERSION_MAJOR 0
#define QTBUS_VERSION_MINOR 1
#define QTBUS_VERSION_PATCH 0
#define QTBUS_VERSION_STRING "0.1.0"
/* Comparable number: major * 10000 + minor * 100 + patch. */
#define QTBUS_VERSION_NUMBER \
    (QTBUS_VERSION_MAJOR * 10000 + QTBUS_VERSION_MINOR * 100 + QTBUS_VERSION_PATCH)

/* ---------------------------------------------------------------------------------
 * Status codes
 *
 * One table, QTBUS_STATUS_MAP(X), yields the enum, qtbus_strerror() and the names.
 * ------------------------------------------------------------------------------- */
#define QTBUS_STATUS_MAP(X)                                                            \
    X(OK,       0, "success")                                                          \
    X(EINVAL,  -1, "invalid argument (NULL, bad name, unknown flag or bad size)")      \
    X(ESTALE,  -2, "unknown or already disposed handle")                               \
    X(EJSON,   -3, "text is not valid JSON (RFC 8259)")                                \
    X(ENOMEM,  -4, "out of memory")                                                    \
    X(ECLOSED, -5, "the bus is being destroyed")                                       \
    X(EBUSY,   -6, "the command is not enabled (executing or disabled)")

typedef enum qtbus_status {
#define QTBUS__STATUS_ENUM(name, value, text) QTBUS_##name = (value),
    QTBUS_STATUS_MAP(QTBUS__STATUS_ENUM)
#undef QTBUS__STATUS_ENUM
    QTBUS__STATUS_LAST = -7
} qtbus_status;

/* Static English text for any int (unknown values included); never NULL. */
QTBUS_API const char *qtbus_strerror(int status);

/* The library's version, e.g. "0.1.0"; equal to QTBUS_VERSION_STRING of the header it
 * was built with.  Static storage. */
QTBUS_API const char *qtbus_version(void);

/* ---------------------------------------------------------------------------------
 * Handles and callbacks
 *
 * Pointers (qtbus_bus *, qtbus_queue *) are for objects the caller creates and frees
 * once.  Things that are disposed, possibly from several places, are 64-bit ids: the
 * low half is a slot and the high half a generation, checked on every call, so a
 * stale or repeated dispose is QTBUS_ESTALE and never touches another object's
 * memory.  Id 0 is never issued and means "none".  Each handle is its own struct, so
 * passing a bag where a token is expected does not compile.
 * ------------------------------------------------------------------------------- */
typedef struct qtbus_bus   qtbus_bus;     /* opaque */
typedef struct qtbus_queue qtbus_queue;   /* opaque */
typedef struct qtbus_event qtbus_event;   /* read-only view, valid only during the callback */

typedef struct { uint64_t id; } qtbus_token;
typedef struct { uint64_t id; } qtbus_bag;
typedef struct { uint64_t id; } qtbus_command;
typedef struct { uint64_t id; } qtbus_execution;
typedef struct { uint64_t id; } qtbus_source;

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

/* Disposes every subscription of the bus (their release hooks follow lifetime rule 1),
 * drops its sticky events and frees the bus.  Dispatches running on other threads at
 * that moment finish safely, and calls that reach the bus while it is being destroyed
 * return QTBUS_ECLOSED; after this returns the pointer must not be used again.
 * Returns QTBUS_OK, QTBUS_EINVAL for NULL or the shared bus. */
QTBUS_API int qtbus_bus_destroy(qtbus_bus *bus);

/* ---------------------------------------------------------------------------------
 * Queues
 *
 * A handler subscribed with a queue runs there instead of on the dispatching thread.
 * Created queues are serial: one item at a time, FIFO, on background threads (not
 * always the same one).  The main queue runs on the process's main thread when the
 * program drains it (below); it is libdispatch's main queue, the one Swift code calls
 * DispatchQueue.main, so C and Swift main-queue work is one FIFO.
 * ------------------------------------------------------------------------------- */

/* The main queue.  Static: never NULL, qtbus_queue_release() on it does nothing. */
QTBUS_API qtbus_queue *qtbus_queue_main(void);

/* A new serial queue; `label` (nullable) names it in debuggers.  NULL only when out of
 * memory.  The caller owns one reference, given back with qtbus_queue_release(). */
QTBUS_API qtbus_queue *qtbus_queue_create(const char *label);

/* Gives back the caller's reference.  Work already queued still runs, and
 * subscriptions that use the queue keep it alive until they are released.  NULL and
 * the main queue are ignored. */
QTBUS_API void qtbus_queue_release(qtbus_queue *queue);

/* A file descriptor that polls readable while main-queue work is pending: add it to
 * poll/epoll/GLib/libuv and call qtbus_main_drain() when it fires.  Owned by the
 * library: do not read or close it.  (It may rarely stay readable once with nothing
 * pending, after work that was posted while a drain was starting; the next drain then
 * returns 0 and clears it.) */
QTBUS_API int qtbus_main_fd(void);

/* Runs the main-queue work pending now (work posted meanwhile waits for the next
 * drain) on the calling thread, which must be the process's main thread.  Returns the
 * number of qtbus work items run (0 when none was pending; work that Swift code posted
 * to DispatchQueue.main runs too but is not counted), or QTBUS_EINVAL, running
 * nothing, when called on another thread. */
QTBUS_API int qtbus_main_drain(void);

/* Waits until main-queue work is pending or `timeout_ms` passed (0: do not wait;
 * negative: wait without limit), then drains as qtbus_main_drain().  Main thread only:
 * QTBUS_EINVAL elsewhere. */
QTBUS_API int qtbus_main_wait(int timeout_ms);

/* ---------------------------------------------------------------------------------
 * Dispose bags
 *
 * A bag collects tokens and disposes all of them at once: in C it stands where the
 * observer object's lifetime stood in QTEventBus's freeWith(object).
 * ------------------------------------------------------------------------------- */

/* Creates an empty bag.  QTBUS_EINVAL for a NULL bag_out. */
QTBUS_API int qtbus_bag_create(qtbus_bag *bag_out);

/* Puts a live token in the bag.  A token is in at most one bag: adding it again to the
 * same bag does nothing (QTBUS_OK), adding it to another bag is QTBUS_EINVAL.
 * QTBUS_ESTALE when the bag or the token is not live.  Tokens leave the bag by
 * themselves when they are disposed. */
QTBUS_API int qtbus_bag_add(qtbus_bag bag, qtbus_token token);

/* Disposes every token in the bag, then the bag itself (its id becomes stale). */
QTBUS_API int qtbus_bag_dispose(qtbus_bag bag);

/* ---------------------------------------------------------------------------------
 * Subscribing
 * ------------------------------------------------------------------------------- */

/* Delivered at most once, even when many threads dispatch at the same time; the
 * subscription is disposed as its delivery starts (inside its own handler its token is
 * already stale and it is no longer counted). */
#define QTBUS_SUB_ONCE   (1u << 0)
/* On subscribing, receive the kept sticky event(s) that match (see QTBUS_EVENT_STICKY),
 * oldest first, before qtbus_subscribe() returns or, with a queue, first on that queue;
 * live events that arrive meanwhile follow them, so replay then live has no gap, no
 * duplicate and keeps order. */
#define QTBUS_SUB_REPLAY (1u << 1)

/* All-zero (memset or `= {0}`) means every default.  Pass NULL for the same. */
typedef struct qtbus_sub_options {
    const char *const *subtypes; /* subtype_count names; none: every event of the type */
    size_t       subtype_count;
    qtbus_queue *queue;          /* NULL: on the dispatching thread, before dispatch returns */
    qtbus_bag    bag;            /* {0}: in no bag */
    int32_t      priority;       /* higher first; equal priorities in subscription order */
    uint32_t     flags;          /* QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY */
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
 * count, unknown flag), QTBUS_ESTALE (options->bag not live), QTBUS_ECLOSED, QTBUS_ENOMEM.
 * On failure *token_out is set to {0}. */
QTBUS_API int qtbus_subscribe(qtbus_bus *bus, const char *type, const qtbus_sub_options *options,
                              qtbus_handler handler, void *userdata, qtbus_release release,
                              qtbus_token *token_out);

/* Disposes one subscription (lifetime rules 1 and 2).  QTBUS_ESTALE when the token is
 * unknown, already disposed, fired (ONCE) or its bus was destroyed. */
QTBUS_API int qtbus_token_dispose(qtbus_token token);

/* 1 while the subscription is live, else 0 (never negative). */
QTBUS_API int qtbus_token_is_active(qtbus_token token);

/* How many live subscriptions an event would reach: with subtype NULL, every live
 * subscription of the type; with a subtype, the whole-type ones plus that subtype's.
 * Returns the count (>= 0), or QTBUS_EINVAL / QTBUS_ECLOSED. */
QTBUS_API int qtbus_subscriber_count(qtbus_bus *bus, const char *type, const char *subtype);

/* Convenience in the spirit of QTEventBus's QTSub: each is an expression whose value is
 * the int status of a qtbus_subscribe() on the shared bus, the token going into `bag`.
 *   QTBUS_SUB(bag, type, handler, userdata)        on the dispatching thread
 *   QTBUS_SUB_MAIN(bag, type, handler, userdata)   on the main queue
 *   QTBUS_SUB_JSON(bag, name, handler, userdata)   JSON events named `name` */
#define QTBUS_SUB(bag, type, handler, userdata) \
    qtbus__sub_in_bag((bag), (type), NULL, NULL, (handler), (userdata))
#define QTBUS_SUB_MAIN(bag, type, handler, userdata) \
    qtbus__sub_in_bag((bag), (type), NULL, qtbus_queue_main(), (handler), (userdata))
#define QTBUS_SUB_JSON(bag, name, handler, userdata) \
    qtbus__sub_in_bag((bag), QTBUS_JSON_TYPE, (name), NULL, (handler), (userdata))

/* ---------------------------------------------------------------------------------
 * Dispatching
 * ------------------------------------------------------------------------------- */

/* Keep this event as the last of its type and subtype for QTBUS_SUB_REPLAY
 * subscribers, until a newer one replaces it or qtbus_sticky_clear() drops it. */
#define QTBUS_EVENT_STICKY (1u << 0)

/* The type of JSON events (their subtype is the JSON name, their data the text). */
#define QTBUS_JSON_TYPE "QTJsonEvent"
/* The type of events that reached no subscription (subtype: the original type). */
#define QTBUS_NO_SUBSCRIBER_TYPE "QTNoSubscriberEvent"

typedef struct qtbus_event_desc {
    const char *type;          /* required */
    const char *subtype;       /* optional */
    const void *data;          /* borrowed during the call; copied once if any delivery is queued */
    size_t      size;          /* data may be NULL only with size 0 */
    void       *object;        /* optional pointer payload, owned by a successful dispatch */
    qtbus_release object_release; /* nullable; runs exactly once, after the last delivery */
    uint32_t    flags;         /* QTBUS_EVENT_STICKY */
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
 * QTBUS_EINVAL (NULL, bad names, data NULL with size > 0, unknown flag), QTBUS_ECLOSED,
 * QTBUS_ENOMEM; on failure object_release is not called. */
QTBUS_API int qtbus_dispatch(qtbus_bus *bus, const qtbus_event_desc *event);

/* Copies the event and returns QTBUS_OK at once; the bus's own serial queue then
 * dispatches it as qtbus_dispatch() would.  Posts are delivered in the order they were
 * made, per bus. */
QTBUS_API int qtbus_dispatch_on_bus_queue(qtbus_bus *bus, const qtbus_event_desc *event);

/* Same, but the dispatch runs on the main queue (when the main thread drains it). */
QTBUS_API int qtbus_dispatch_on_main(qtbus_bus *bus, const qtbus_event_desc *event);

/* Dispatches a JSON event: type QTBUS_JSON_TYPE, subtype `name`, data the text
 * (NUL-terminated, size excluding the NUL; copied, still NUL-terminated, for queued
 * deliveries).  The text is validated
 * against RFC 8259 first (UTF-8, any value at top level): QTBUS_EJSON and nothing
 * delivered when it is not JSON.  Returns as qtbus_dispatch(). */
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
QTBUS_API void       *qtbus_event_object(const qtbus_event *event);
/* No later handler of this dispatch receives the event (synchronous handlers are not
 * run, queued ones not posted).  QTBUS_EINVAL for NULL or for an event delivered on a
 * queue, whose dispatch has already finished. */
QTBUS_API int         qtbus_event_stop(const qtbus_event *event);

/* ---------------------------------------------------------------------------------
 * Internal helper behind the QTBUS_SUB* macros; not API.
 * ------------------------------------------------------------------------------- */
static inline int qtbus__sub_in_bag(qtbus_bag bag, const char *type, const char *subtype,
                                    qtbus_queue *queue, qtbus_handler handler, void *userdata)
{
    const char *subtypes[1];
    qtbus_sub_options options;
    subtypes[0] = subtype;
    options.subtypes = subtype ? subtypes : NULL;
    options.subtype_count = subtype ? 1u : 0u;
    options.queue = queue;
    options.bag = bag;
    options.priority = 0;
    options.flags = 0;
    return qtbus_subscribe(qtbus_shared(), type, &options, handler, userdata, NULL, NULL);
}

#ifdef __cplusplus
}
#endif

#endif /* QTBUS_H */
