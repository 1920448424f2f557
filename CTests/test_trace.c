/* SPDX-License-Identifier: MIT */
/*
 * qtbus_trace_set: a record of every kind, with its fields, in the order things
 * happened (a ONCE dispose, its delivery, the dispatch, then the deferred release);
 * queued deliveries on their queue's thread; misuse from inside a handler; kind masks;
 * the hook calling the library (not traced); replacing and removing (release once,
 * before qtbus_trace_set returns); bus destroy; bad input; and the hook replaced and
 * removed while four threads dispatch: no call of a replaced hook starts or runs once
 * qtbus_trace_set returned, and each hook's release runs exactly once; failed calls
 * racing their bus's destroy.
 */
#include "test_util.h"

typedef struct {
    uint32_t kind;
    char function[48], type[48], subtype[48];
    uint64_t token;
    int status, reached, queued;
    uint64_t duration_ns;
    pthread_t thread;
} entry;

typedef struct {
    pthread_mutex_t lock;
    int n;
    entry e[256];
    atomic_int released;
    qtbus_bus *bus; /* set: the hook calls the library on each SUBSCRIBE record */
} trace_log;

static void copy(char *to, const char *from)
{
    if (from)
        snprintf(to, 48, "%s", from);
    else
        to[0] = '\0';
}

static void recorder(const qtbus_trace_record *r, void *userdata)
{
    trace_log *log = userdata;
    pthread_mutex_lock(&log->lock);
    CHECK(log->n < 256);
    entry *e = &log->e[log->n++];
    e->kind = r->kind;
    copy(e->function, r->function);
    copy(e->type, r->type);
    copy(e->subtype, r->subtype);
    e->token = r->token.id;
    e->status = r->status;
    e->reached = r->reached;
    e->queued = r->queued;
    e->duration_ns = r->duration_ns;
    e->thread = pthread_self();
    qtbus_bus *bus = log->bus;
    pthread_mutex_unlock(&log->lock);
    if (bus && r->kind == QTBUS_TRACE_SUBSCRIBE) {
        /* The hook may call the library; what it does is not traced. */
        CHECK_EQ_INT(qtbus_subscriber_count(bus, r->type, NULL) >= 1, 1);
        CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "FromHook"}), 0);
        CHECK_EQ_INT(qtbus_subscribe(bus, "", NULL, NULL, NULL, NULL, NULL), QTBUS_EINVAL);
    }
}

static void log_release(void *userdata) { atomic_fetch_add(&((trace_log *)userdata)->released, 1); }

static void log_init(trace_log *log)
{
    memset(log, 0, sizeof *log);
    pthread_mutex_init(&log->lock, NULL);
}

static void log_set_bus(trace_log *log, qtbus_bus *bus)
{
    pthread_mutex_lock(&log->lock);
    log->bus = bus;
    pthread_mutex_unlock(&log->lock);
}

static int log_count(trace_log *log)
{
    pthread_mutex_lock(&log->lock);
    int n = log->n;
    pthread_mutex_unlock(&log->lock);
    return n;
}

static const char *kind_name(uint32_t kind)
{
    switch (kind) {
    case QTBUS_TRACE_DISPATCH: return "DISPATCH";
    case QTBUS_TRACE_DELIVER: return "DELIVER";
    case QTBUS_TRACE_SUBSCRIBE: return "SUBSCRIBE";
    case QTBUS_TRACE_DISPOSE: return "DISPOSE";
    case QTBUS_TRACE_RELEASE: return "RELEASE";
    case QTBUS_TRACE_MISUSE: return "MISUSE";
    default: return "?";
    }
}

/* Checks entry i of the log. */
#define CHECK_ENTRY(log, i, k, fn, ty, tok)                                                                            \
    do {                                                                                                               \
        CHECK_MSG((i) < (log)->n, "no entry %d (%d)", (int)(i), (log)->n);                                             \
        const entry *e_ = &(log)->e[i];                                                                                \
        CHECK_EQ_STR(kind_name(e_->kind), kind_name(k));                                                               \
        CHECK_EQ_STR(e_->function, fn);                                                                                \
        CHECK_EQ_STR(e_->type, ty);                                                                                    \
        CHECK_EQ_U64(e_->token, tok);                                                                                  \
    } while (0)

static atomic_int releases;
static void count_release(void *userdata)
{
    (void)userdata;
    atomic_fetch_add(&releases, 1);
}

static void slow(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    tu_sleep_ms(2);
}

static void nop(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
}

/* A handler that misuses the library. */
static void misuser(const qtbus_event *event, void *userdata)
{
    (void)event;
    qtbus_bus *bus = userdata;
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "T", .subtype = ""}), QTBUS_EINVAL);
}

static void every_kind(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    trace_log log;
    log_init(&log);
    CHECK_EQ_INT(qtbus_trace_set(bus, QTBUS_TRACE_ALL, recorder, &log, log_release), QTBUS_OK);
    CHECK_EQ_INT(log.n, 0);

    /* SUBSCRIBE */
    qtbus_token a, b;
    const char *s[] = {"s"};
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, slow, NULL, count_release, &a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T",
                                 &(qtbus_sub_options){.subtypes = s, .subtype_count = 1, .flags = QTBUS_SUB_ONCE}, nop,
                                 NULL, count_release, &b),
                 QTBUS_OK);
    CHECK_EQ_INT(log.n, 2);
    CHECK_ENTRY(&log, 0, QTBUS_TRACE_SUBSCRIBE, "", "T", a.id);
    CHECK_ENTRY(&log, 1, QTBUS_TRACE_SUBSCRIBE, "", "T", b.id);

    /* A dispatch reaching a ONCE subscription: it is disposed before its delivery, and
     * released once the dispatch is over (a deferred dispose). */
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "T", .subtype = "s"}), 2);
    CHECK_EQ_INT(log.n, 7);
    CHECK_ENTRY(&log, 2, QTBUS_TRACE_DISPOSE, "QTBUS_SUB_ONCE", "T", b.id);
    CHECK_ENTRY(&log, 3, QTBUS_TRACE_DELIVER, "", "T", b.id);
    CHECK_EQ_STR(log.e[3].subtype, "s");
    CHECK_EQ_INT(log.e[3].queued, 0);
    CHECK_ENTRY(&log, 4, QTBUS_TRACE_DELIVER, "", "T", a.id);
    CHECK(log.e[4].duration_ns >= 2000000); /* slow() sleeps 2 ms */
    CHECK_ENTRY(&log, 5, QTBUS_TRACE_DISPATCH, "", "T", 0);
    CHECK_EQ_STR(log.e[5].subtype, "s");
    CHECK_EQ_INT(log.e[5].reached, 2);
    CHECK_EQ_INT(log.e[5].status, 2);
    CHECK(log.e[5].duration_ns >= log.e[4].duration_ns);
    CHECK_ENTRY(&log, 6, QTBUS_TRACE_RELEASE, "", "", b.id);
    CHECK_EQ_INT(atomic_load(&releases), 1);

    /* Dispose by token: DISPOSE then RELEASE, before the call returns. */
    CHECK_EQ_INT(qtbus_token_dispose(a), QTBUS_OK);
    CHECK_EQ_INT(log.n, 9);
    CHECK_ENTRY(&log, 7, QTBUS_TRACE_DISPOSE, "qtbus_token_dispose", "T", a.id);
    CHECK_ENTRY(&log, 8, QTBUS_TRACE_RELEASE, "", "", a.id);

    /* No release hook: no RELEASE record. */
    qtbus_token c;
    CHECK_EQ_INT(qtbus_subscribe(bus, "U", NULL, nop, NULL, NULL, &c), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(c), QTBUS_OK);
    CHECK_EQ_INT(log.n, 11);
    CHECK_ENTRY(&log, 10, QTBUS_TRACE_DISPOSE, "qtbus_token_dispose", "U", c.id);

    /* Bag dispose. */
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "V", &(qtbus_sub_options){.bag = bag}, nop, NULL, count_release, &c), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
    CHECK_EQ_INT(log.n, 14);
    CHECK_ENTRY(&log, 12, QTBUS_TRACE_DISPOSE, "qtbus_bag_dispose", "V", c.id);
    CHECK_ENTRY(&log, 13, QTBUS_TRACE_RELEASE, "", "", c.id);

    /* MISUSE, from a call and from inside a handler (before that handler's DELIVER). */
    CHECK_EQ_INT(qtbus_subscribe(bus, "", NULL, nop, NULL, NULL, NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(log.n, 15);
    CHECK_ENTRY(&log, 14, QTBUS_TRACE_MISUSE, "qtbus_subscribe", "", 0);
    CHECK_EQ_INT(log.e[14].status, QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_subscribe(bus, "M", NULL, misuser, bus, NULL, &c), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "M"}), 1);
    CHECK_EQ_INT(log.n, 19);
    CHECK_ENTRY(&log, 16, QTBUS_TRACE_MISUSE, "qtbus_dispatch", "", 0);
    CHECK_ENTRY(&log, 17, QTBUS_TRACE_DELIVER, "", "M", c.id);
    CHECK_ENTRY(&log, 18, QTBUS_TRACE_DISPATCH, "", "M", 0);
    /* A call naming no bus has no hook to report to. */
    CHECK_EQ_INT(qtbus_token_dispose(a), QTBUS_ESTALE);
    CHECK_EQ_INT(log.n, 19);

    /* A replay delivers on the subscribing thread: queued 0, after its SUBSCRIBE. */
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "K", .flags = QTBUS_EVENT_STICKY}), 0);
    CHECK_EQ_INT(log.n, 20);
    CHECK_ENTRY(&log, 19, QTBUS_TRACE_DISPATCH, "", "K", 0);
    CHECK_EQ_INT(qtbus_subscribe(bus, "K", &(qtbus_sub_options){.flags = QTBUS_SUB_REPLAY}, nop, NULL, NULL, &c),
                 QTBUS_OK);
    CHECK_EQ_INT(log.n, 22);
    CHECK_ENTRY(&log, 20, QTBUS_TRACE_SUBSCRIBE, "", "K", c.id);
    CHECK_ENTRY(&log, 21, QTBUS_TRACE_DELIVER, "", "K", c.id);
    CHECK_EQ_INT(log.e[21].queued, 0);

    /* A queued delivery: its DELIVER comes from the queue's thread, queued 1.  The queue
     * may run it before the dispatch returns, so the DELIVER and DISPATCH records come
     * in either order. */
    qtbus_queue *queue = qtbus_queue_create("trace");
    qtbus_token q;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Q", &(qtbus_sub_options){.queue = queue}, nop, NULL, NULL, &q), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "Q", .data = "x", .size = 1}), 1);
    CHECK_WAIT(log_count(&log) == 25, TU_WAIT_MS);
    CHECK_ENTRY(&log, 22, QTBUS_TRACE_SUBSCRIBE, "", "Q", q.id);
    int delivered = log.e[23].kind == QTBUS_TRACE_DELIVER ? 23 : 24;
    CHECK_ENTRY(&log, 47 - delivered, QTBUS_TRACE_DISPATCH, "", "Q", 0);
    CHECK_ENTRY(&log, delivered, QTBUS_TRACE_DELIVER, "", "Q", q.id);
    CHECK_EQ_INT(log.e[delivered].queued, 1);
    CHECK(!pthread_equal(log.e[delivered].thread, pthread_self()));

    /* The hook calls the library: nothing it does is traced (a dispatch, a misuse). */
    log_set_bus(&log, bus);
    qtbus_token h;
    CHECK_EQ_INT(qtbus_subscribe(bus, "H", NULL, nop, NULL, NULL, &h), QTBUS_OK);
    CHECK_EQ_INT(log.n, 26);
    CHECK_ENTRY(&log, 25, QTBUS_TRACE_SUBSCRIBE, "", "H", h.id);
    log_set_bus(&log, NULL);

    /* Bus destroy: a DISPOSE for each live subscription, its RELEASE, then the hook's
     * release, before destroy returns. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "D", NULL, nop, NULL, count_release, &c), QTBUS_OK);
    int before = log.n;
    CHECK_EQ_INT(atomic_load(&log.released), 0);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&log.released), 1);
    int disposed = 0, released_d = 0;
    for (int i = before; i < log.n; i++) {
        CHECK_MSG(log.e[i].kind == QTBUS_TRACE_DISPOSE || log.e[i].kind == QTBUS_TRACE_RELEASE, "entry %d is %s", i,
                  kind_name(log.e[i].kind));
        if (log.e[i].kind == QTBUS_TRACE_DISPOSE) {
            CHECK_EQ_STR(log.e[i].function, "qtbus_bus_destroy");
            disposed++;
        }
        if (log.e[i].kind == QTBUS_TRACE_RELEASE) {
            CHECK_EQ_U64(log.e[i].token, c.id);
            released_d++;
        }
    }
    CHECK_EQ_INT(disposed, 5); /* M, K, Q, H, D */
    CHECK_EQ_INT(released_d, 1);
    qtbus_queue_release(queue);
    pthread_mutex_destroy(&log.lock);
}

static void kinds_and_replacing(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    trace_log one, two;
    log_init(&one);
    log_init(&two);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, NULL), QTBUS_OK);

    /* Only the kinds asked for. */
    CHECK_EQ_INT(qtbus_trace_set(bus, QTBUS_TRACE_DISPATCH, recorder, &one, log_release), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "T"}), 1);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(one.n, 1);
    CHECK_EQ_INT(one.e[0].kind, QTBUS_TRACE_DISPATCH);

    /* Replaced: the old one's release runs before the call returns, and it gets nothing
     * more; the new one gets what follows. */
    CHECK_EQ_INT(qtbus_trace_set(bus, QTBUS_TRACE_DELIVER, recorder, &two, log_release), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&one.released), 1);
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "T"}), 2);
    CHECK_EQ_INT(one.n, 1);
    CHECK_EQ_INT(two.n, 2);
    CHECK_EQ_INT(two.e[0].kind, QTBUS_TRACE_DELIVER);

    /* Removed. */
    CHECK_EQ_INT(qtbus_trace_set(bus, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&two.released), 1);
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "T"}), 2);
    CHECK_EQ_INT(two.n, 2);
    CHECK_EQ_INT(qtbus_trace_set(bus, 0, NULL, NULL, NULL), QTBUS_OK); /* none to remove */

    /* Bad input changes nothing (and a refused hook's release is not called). */
    CHECK_EQ_INT(qtbus_trace_set(NULL, QTBUS_TRACE_ALL, recorder, &one, log_release), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_trace_set: the bus is NULL");
    CHECK_EQ_INT(qtbus_trace_set(bus, QTBUS_TRACE_ALL + 1, recorder, &one, log_release), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_trace_set: unknown bits 0x80 in kinds");
    CHECK_EQ_INT(qtbus_trace_set(bus, 0, NULL, &one, log_release), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_trace_set: fn is NULL (removing the hook) with kinds, userdata or a release");
    CHECK_EQ_INT(atomic_load(&one.released), 1);
    CHECK_EQ_INT(qtbus_dispatch(bus, &(qtbus_event_desc){.type = "T"}), 2);
    CHECK_EQ_INT(one.n, 1);

    /* A hook with MISUSE only sees its own bad set call too: it is the bus's call. */
    trace_log three;
    log_init(&three);
    CHECK_EQ_INT(qtbus_trace_set(bus, QTBUS_TRACE_MISUSE, recorder, &three, log_release), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(bus, 1u << 7, recorder, &one, NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(three.n, 1);
    CHECK_EQ_STR(three.e[0].function, "qtbus_trace_set");

    /* The shared bus takes a hook as any other. */
    trace_log shared;
    log_init(&shared);
    CHECK_EQ_INT(qtbus_trace_set(qtbus_shared(), QTBUS_TRACE_MISUSE, recorder, &shared, log_release), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(qtbus_shared()), QTBUS_EINVAL);
    CHECK_EQ_INT(shared.n, 1);
    CHECK_EQ_STR(shared.e[0].function, "qtbus_bus_destroy");
    CHECK_EQ_INT(qtbus_trace_set(qtbus_shared(), 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&shared.released), 1);

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&three.released), 1);
}

/* ---- replaced and removed while four threads dispatch ---- */

/* Valgrind runs one thread at a time: there, each replacement waits for the running
 * calls of the replaced hook a scheduling round or more, so there are fewer of them and
 * the dispatching threads pause between dispatches. */
static int under_valgrind(void)
{
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "vgpreload") != NULL;
}

typedef struct {
    atomic_int removed; /* set once qtbus_trace_set that replaced it returned */
    atomic_int running;
    atomic_int calls;
    atomic_int late; /* calls that started after `removed` */
    atomic_int released;
    atomic_int running_at_release;
} counted_hook;

static void counted(const qtbus_trace_record *r, void *userdata)
{
    (void)r;
    counted_hook *h = userdata;
    atomic_fetch_add(&h->running, 1);
    if (atomic_load(&h->removed)) atomic_fetch_add(&h->late, 1);
    atomic_fetch_add(&h->calls, 1);
    sched_yield();
    atomic_fetch_sub(&h->running, 1);
}

static void counted_release(void *userdata)
{
    counted_hook *h = userdata;
    atomic_fetch_add(&h->running_at_release, atomic_load(&h->running));
    atomic_fetch_add(&h->released, 1);
}

typedef struct {
    qtbus_bus *bus;
    atomic_int stop;
} dispatchers;

static void dispatch_thread(int index, void *ctx)
{
    (void)index;
    dispatchers *d = ctx;
    const int pause = under_valgrind();
    while (!atomic_load(&d->stop)) {
        CHECK_EQ_INT(qtbus_dispatch(d->bus, &(qtbus_event_desc){.type = "T"}), 2);
        if (pause) nanosleep(&(struct timespec){0, 100000}, NULL);
    }
}

#define HOOKS 300

static void replaced_while_dispatching(void)
{
    const int count = under_valgrind() ? 30 : HOOKS;
    qtbus_bus *bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
    static counted_hook hooks[HOOKS];
    dispatchers d = {.bus = bus};
    tu_threads threads;
    tu_threads_start(&threads, 4, dispatch_thread, &d);
    long calls = 0;
    for (int i = 0; i < count; i++) {
        uint32_t kinds = i % 3 == 0 ? QTBUS_TRACE_DISPATCH : QTBUS_TRACE_DISPATCH | QTBUS_TRACE_DELIVER;
        CHECK_EQ_INT(qtbus_trace_set(bus, kinds, counted, &hooks[i], counted_release), QTBUS_OK);
        if (i > 0) {
            counted_hook *old = &hooks[i - 1];
            atomic_store(&old->removed, 1);
            /* Its release ran, once, with none of its calls running, before the set returned. */
            CHECK_EQ_INT(atomic_load(&old->released), 1);
            CHECK_EQ_INT(atomic_load(&old->running_at_release), 0);
            CHECK_EQ_INT(atomic_load(&old->running), 0);
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
        if (i % 50 == 49) {
            /* Removed outright now and then. */
            CHECK_EQ_INT(qtbus_trace_set(bus, 0, NULL, NULL, NULL), QTBUS_OK);
            CHECK_EQ_INT(atomic_load(&hooks[i].released), 1);
            CHECK_EQ_INT(atomic_load(&hooks[i].running), 0);
        }
    }
    CHECK_EQ_INT(qtbus_trace_set(bus, 0, NULL, NULL, NULL), QTBUS_OK);
    atomic_store(&hooks[count - 1].removed, 1);
    tu_sleep_ms(20);
    atomic_store(&d.stop, 1);
    tu_threads_join(&threads);
    for (int i = 0; i < count; i++) {
        CHECK_MSG(atomic_load(&hooks[i].released) == 1, "hook %d released %d times", i,
                  atomic_load(&hooks[i].released));
        CHECK_MSG(atomic_load(&hooks[i].late) == 0, "hook %d: %d calls after it was replaced", i,
                  atomic_load(&hooks[i].late));
        calls += atomic_load(&hooks[i].calls);
    }
    CHECK(calls > count); /* the hooks did see the dispatches */
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("  %d hooks replaced under 4 dispatching threads: %ld calls, none late, each released once\n", count, calls);
}

/* ---- a hook that replaces itself from inside its call, while others dispatch ---- */

typedef struct {
    qtbus_bus *bus;
    counted_hook *next;
    atomic_int replaced;
    counted_hook base;
} self_replacing;

static void replace_self(const qtbus_trace_record *r, void *userdata)
{
    (void)r;
    self_replacing *h = userdata;
    atomic_fetch_add(&h->base.running, 1);
    if (atomic_exchange(&h->replaced, 1) == 0) {
        /* Inside a hook: cannot wait, so the release waits for the last running call. */
        CHECK_EQ_INT(qtbus_trace_set(h->bus, QTBUS_TRACE_DISPATCH, counted, h->next, counted_release), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&h->base.released), 0); /* this call is still running */
    }
    atomic_fetch_sub(&h->base.running, 1);
}

static void self_release(void *userdata)
{
    self_replacing *h = userdata;
    atomic_fetch_add(&h->base.running_at_release, atomic_load(&h->base.running));
    atomic_fetch_add(&h->base.released, 1);
}

static void replaced_from_inside(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
    for (int round = 0; round < 50; round++) {
        counted_hook next = {0};
        self_replacing h = {.bus = bus, .next = &next};
        dispatchers d = {.bus = bus};
        CHECK_EQ_INT(qtbus_trace_set(bus, QTBUS_TRACE_DISPATCH, replace_self, &h, self_release), QTBUS_OK);
        tu_threads threads;
        tu_threads_start(&threads, 4, dispatch_thread, &d);
        CHECK_WAIT(atomic_load(&h.base.released) == 1, TU_WAIT_MS);
        CHECK_WAIT(atomic_load(&next.calls) > 0, TU_WAIT_MS);
        atomic_store(&d.stop, 1);
        tu_threads_join(&threads);
        CHECK_EQ_INT(atomic_load(&h.base.released), 1);
        CHECK_EQ_INT(atomic_load(&h.base.running_at_release), 0);
        CHECK_EQ_INT(qtbus_trace_set(bus, 0, NULL, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&next.released), 1);
    }
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
}

/* ---- failed calls racing the bus's destroy: MISUSE records never read a freed bus,
 * and none arrives after destroy returned ---- */

typedef struct {
    qtbus_bus *bus;
    pthread_barrier_t go;
} misusers;

static void misuse_thread(int index, void *ctx)
{
    misusers *m = ctx;
    pthread_barrier_wait(&m->go);
    /* Started before destroy (the barrier), so it may overlap it. */
    int rc = index % 2 ? qtbus_dispatch(m->bus, &(qtbus_event_desc){.type = "T", .subtype = ""})
                       : qtbus_subscribe(m->bus, "", NULL, nop, NULL, NULL, NULL);
    CHECK(rc == QTBUS_EINVAL || rc == QTBUS_ECLOSED);
}

static void misuse_during_destroy(void)
{
    for (int round = 0; round < 100; round++) {
        counted_hook h = {0};
        misusers m = {.bus = qtbus_bus_create()};
        CHECK(pthread_barrier_init(&m.go, NULL, 5) == 0);
        CHECK_EQ_INT(qtbus_trace_set(m.bus, QTBUS_TRACE_MISUSE, counted, &h, counted_release), QTBUS_OK);
        tu_threads threads;
        tu_threads_start(&threads, 4, misuse_thread, &m);
        pthread_barrier_wait(&m.go);
        CHECK_EQ_INT(qtbus_bus_destroy(m.bus), QTBUS_OK);
        atomic_store(&h.removed, 1);
        CHECK_EQ_INT(atomic_load(&h.released), 1);
        tu_threads_join(&threads);
        CHECK_EQ_INT(atomic_load(&h.late), 0);
        CHECK_EQ_INT(atomic_load(&h.released), 1);
        pthread_barrier_destroy(&m.go);
    }
}

int main(void)
{
    int64_t t0 = tu_now_ms();
    every_kind();
    kinds_and_replacing();
    int64_t t1 = tu_now_ms();
    replaced_while_dispatching();
    int64_t t2 = tu_now_ms();
    replaced_from_inside();
    int64_t t3 = tu_now_ms();
    misuse_during_destroy();
    printf("  ms: records %lld, replaced %lld, from inside %lld, racing destroy %lld\n", (long long)(t1 - t0),
           (long long)(t2 - t1), (long long)(t3 - t2), (long long)(tu_now_ms() - t3));
    printf("test_trace: ok\n");
    return 0;
}
