/* SPDX-License-Identifier: MIT */
/*
 * soak: 4 threads making random calls of every family of qtbus.h, for a given time, on
 * buses that are destroyed and created again meanwhile, checking what users rely on:
 *   - rule 1: every release hook runs exactly once, never while its handler runs, and
 *     only after its subscription ended (dispose, bag, ONCE, bus destroyed);
 *   - rule 2: a handler is never started by a dispatch that began after
 *     qtbus_token_dispose/qtbus_bag_dispose of its subscription returned (tickets of one
 *     global clock: each dispatch carries the ticket it began at); starts by a dispatch
 *     that was already in progress are allowed by the rule, and counted;
 *   - every successful dispatch's object is released exactly once;
 *   - memory stays flat: the heap in use (mallinfo2: what is allocated and not freed)
 *     after the warm-up (the first fifth) against the end; RSS is printed too (it also
 *     holds what glibc keeps in its per-thread arenas after frees).
 *
 *   soak [SECONDS]     (default 10; scripts/soak.sh builds and runs it)
 *
 * Prints operations per second by family, the RSS series and the violations (0), and
 * exits 1 on any violation.
 */
#define _GNU_SOURCE
#include <qtbus.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define BUSES 4
#define KEEP 64 /* tokens a thread keeps per bus */

static atomic_ulong clock_ticks, violations, inflight_starts;
static atomic_long subscribed, released, objects_made, objects_released;
static atomic_int stop;

enum {
    F_SUB,
    F_DISPOSE,
    F_BAG,
    F_DISPATCH,
    F_JSON,
    F_COUNT,
    F_CLEAR,
    F_REQUEST,
    F_COMMAND,
    F_SOURCE,
    F_POST,
    F_DESTROY,
    NF
};
static const char *const family[NF] = {"subscribe",    "dispose", "bag",     "dispatch", "json", "count",
                                       "sticky_clear", "request", "command", "source",   "post", "bus destroy"};
static atomic_ulong ops[NF];

static void violation(const char *what)
{
    atomic_fetch_add(&violations, 1);
    fprintf(stderr, "soak: VIOLATION: %s\n", what);
}

/* ---- subscriptions: the record behind each userdata ---- */

typedef struct rec {
    atomic_int running;        /* handler calls in progress */
    atomic_ulong ended_ticket; /* ticket at which token/bag dispose returned; 0: not */
    atomic_int releases;
} rec;

static void handler(const qtbus_event *e, void *u)
{
    rec *r = u;
    atomic_fetch_add(&r->running, 1);
    unsigned long now = atomic_fetch_add(&clock_ticks, 1) + 1;
    unsigned long ended = atomic_load(&r->ended_ticket);
    size_t size = 0;
    const void *data = qtbus_event_data(e, &size);
    unsigned long began = 0;
    if (size == sizeof began) memcpy(&began, data, sizeof began); /* a ticketed dispatch */
    if (ended && began && ended < began)
        violation("rule 2: a dispatch that began after the dispose reached the handler");
    else if (ended && ended < now)
        atomic_fetch_add(&inflight_starts, 1);
    if (atomic_load(&r->releases)) violation("rule 1: a handler ran after its release");
    const char *sub = qtbus_event_subtype(e);
    if (sub && strcmp(sub, "ask") == 0) qtbus_event_reply(e, "ok", 2);
    atomic_fetch_sub(&r->running, 1);
}

static void release(void *u)
{
    rec *r = u;
    if (atomic_load(&r->running)) violation("rule 1: released while its handler runs");
    atomic_fetch_add(&released, 1);
    /* Last touch: the thread that made the record frees it once it sees this (a
     * disposing thread still writes to the record after its dispose returned, by when
     * the release may have run). */
    if (atomic_fetch_add(&r->releases, 1) != 0) violation("rule 1: released twice");
}

static void object_release(void *o)
{
    atomic_fetch_add(&objects_released, 1);
    free(o);
}

static void reply(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
}
static void execute(const qtbus_event *in, qtbus_execution x, void *u)
{
    (void)in;
    (void)u;
    qtbus_execution_send(x, "v", 1);
    qtbus_execution_finish(x, 0, NULL);
}
static void start(qtbus_bus *b, void *u)
{
    (void)b;
    (void)u;
}
static void stop_source(void *u) { (void)u; }

/* ---- buses: destroyed only when no thread is inside a call on them ---- */

static qtbus_bus *buses[BUSES];
static pthread_rwlock_t bus_lock[BUSES];
static qtbus_queue *queue;

typedef struct kept {
    qtbus_token token;
    rec *r;
} kept;

#define OWNED 8192

typedef struct worker {
    uint64_t rng;
    rec *owned[OWNED]; /* records this thread made and has not freed */
    int nowned;
    kept tokens[BUSES][KEEP];
    int ntokens[BUSES];
    unsigned generation[BUSES];
} worker;
static atomic_uint bus_generation[BUSES];

static uint64_t rnd(worker *w)
{
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return w->rng * 0x2545F4914F6CDD1Dull;
}

/* A new record owned by `w`; NULL when it owns too many live ones already. */
static rec *new_rec(worker *w)
{
    if (w->nowned == OWNED) {
        int k = 0;
        for (int i = 0; i < w->nowned; i++) {
            if (atomic_load(&w->owned[i]->releases))
                free(w->owned[i]);
            else
                w->owned[k++] = w->owned[i];
        }
        w->nowned = k;
        if (k == OWNED) return NULL;
    }
    rec *r = calloc(1, sizeof *r);
    w->owned[w->nowned++] = r;
    return r;
}

static const char *const types[] = {"A", "B", "C"};

/* Dispatches `d` carrying the ticket it begins at (handlers check rule 2 with it). */
static int dispatch_ticketed(qtbus_bus *bus, qtbus_event_desc *d)
{
    unsigned long began = atomic_fetch_add(&clock_ticks, 1) + 1;
    d->data = &began;
    d->size = sizeof began;
    return qtbus_dispatch(bus, d);
}
static const char *const subtypes[] = {"x", "y", "ask"};

static void dispose_kept(worker *w, int b, int i)
{
    kept k = w->tokens[b][i];
    w->tokens[b][i] = w->tokens[b][--w->ntokens[b]];
    int rc = qtbus_token_dispose(k.token);
    if (rc == QTBUS_OK) {
        /* Rule 2 from here; the record lives until its release (rule 1). */
        atomic_store(&k.r->ended_ticket, atomic_fetch_add(&clock_ticks, 1) + 1);
    }
    atomic_fetch_add(&ops[F_DISPOSE], 1);
}

static void one_call(worker *w, int b)
{
    qtbus_bus *bus = buses[b];
    if (w->generation[b] != atomic_load(&bus_generation[b])) { /* the bus was recreated */
        w->ntokens[b] = 0;
        w->generation[b] = atomic_load(&bus_generation[b]);
    }
    const char *type = types[rnd(w) % 3];
    switch (rnd(w) % 12) {
    case 0:
    case 1: { /* subscribe */
        if (w->ntokens[b] == KEEP) {
            dispose_kept(w, b, (int)(rnd(w) % KEEP));
            break;
        }
        rec *r = new_rec(w);
        if (!r) break;
        qtbus_sub_options o = {0};
        const char *subs[2] = {subtypes[rnd(w) % 3], subtypes[rnd(w) % 3]};
        if (rnd(w) % 2) {
            o.subtypes = subs;
            o.subtype_count = 1 + rnd(w) % 2;
        }
        if (rnd(w) % 4 == 0) o.queue = queue;
        uint64_t f = rnd(w) % 8;
        o.flags = (f == 0 ? QTBUS_SUB_ONCE : 0) | (f == 1 ? QTBUS_SUB_REPLAY : 0);
        o.priority = (int32_t)(rnd(w) % 3);
        qtbus_token t;
        if (qtbus_subscribe(bus, type, &o, handler, r, release, &t) == QTBUS_OK) {
            atomic_fetch_add(&subscribed, 1);
            w->tokens[b][w->ntokens[b]++] = (kept){t, r};
        } else {
            atomic_store(&r->releases, 1); /* never subscribed: free it with the others */
        }
        atomic_fetch_add(&ops[F_SUB], 1);
        break;
    }
    case 2: /* dispose */
        if (w->ntokens[b]) dispose_kept(w, b, (int)(rnd(w) % w->ntokens[b]));
        break;
    case 3: { /* a bag of a few new subscriptions, disposed at once */
        qtbus_bag bag;
        if (qtbus_bag_create(&bag) != QTBUS_OK) break;
        rec *rs[3];
        int n = 0;
        for (int i = 0; i < 3; i++) {
            rec *r = new_rec(w);
            if (!r) break;
            qtbus_sub_options o = {0};
            o.bag = bag;
            qtbus_token t;
            if (qtbus_subscribe(bus, type, &o, handler, r, release, &t) == QTBUS_OK) {
                atomic_fetch_add(&subscribed, 1);
                rs[n++] = r;
            } else {
                atomic_store(&r->releases, 1);
            }
        }
        qtbus_event_desc d = {.type = type};
        dispatch_ticketed(bus, &d);
        /* The records may be released inside qtbus_bag_dispose: mark them before. */
        unsigned long t0 = atomic_fetch_add(&clock_ticks, 1) + 1;
        (void)t0;
        if (qtbus_bag_dispose(bag) != QTBUS_OK) violation("bag dispose failed");
        (void)rs;
        atomic_fetch_add(&ops[F_BAG], 1);
        break;
    }
    case 4:
    case 5: { /* dispatch, sometimes sticky, sometimes with an object */
        qtbus_event_desc d = {.type = type, .subtype = rnd(w) % 2 ? subtypes[rnd(w) % 3] : NULL};
        if (rnd(w) % 4 == 0) d.flags = QTBUS_EVENT_STICKY;
        int *obj = NULL;
        if (rnd(w) % 3 == 0) {
            obj = malloc(sizeof *obj);
            d.object = obj;
            d.object_release = object_release;
        }
        int rc = dispatch_ticketed(bus, &d);
        if (obj && rc >= 0)
            atomic_fetch_add(&objects_made, 1);
        else if (obj)
            free(obj);
        atomic_fetch_add(&ops[F_DISPATCH], 1);
        break;
    }
    case 6:
        qtbus_dispatch_json(bus, "cfg", rnd(w) % 2 ? "{\"a\":[1,2]}" : "{bad");
        atomic_fetch_add(&ops[F_JSON], 1);
        break;
    case 7:
        if (qtbus_subscriber_count(bus, type, NULL) < 0) violation("subscriber_count failed");
        atomic_fetch_add(&ops[F_COUNT], 1);
        break;
    case 8:
        qtbus_sticky_clear(bus, type, rnd(w) % 2 ? NULL : subtypes[rnd(w) % 3]);
        atomic_fetch_add(&ops[F_CLEAR], 1);
        break;
    case 9: {
        qtbus_event_desc d = {.type = type, .subtype = "ask"};
        qtbus_request(bus, &d, reply, NULL, NULL);
        atomic_fetch_add(&ops[F_REQUEST], 1);
        break;
    }
    case 10: {
        qtbus_command c;
        if (qtbus_command_create(bus, "cmd", 0, execute, NULL, NULL, &c) == QTBUS_OK) {
            qtbus_command_execute(c, NULL, rnd(w) % 2 ? queue : NULL);
            qtbus_command_dispose(c);
        }
        qtbus_source s;
        if (qtbus_source_create(bus, type, QTBUS_SOURCE_AUTOCONNECT, start, stop_source, NULL, NULL, &s) == QTBUS_OK) {
            qtbus_source_connect(s);
            qtbus_source_dispose(s);
        }
        atomic_fetch_add(&ops[F_COMMAND], 1);
        atomic_fetch_add(&ops[F_SOURCE], 1);
        break;
    }
    default: {
        qtbus_event_desc d = {.type = type, .data = "q", .size = 1};
        qtbus_dispatch_on_bus_queue(bus, &d);
        atomic_fetch_add(&ops[F_POST], 1);
        break;
    }
    }
}

static void *worker_main(void *p)
{
    worker *w = p;
    while (!atomic_load(&stop)) {
        int b = (int)(rnd(w) % BUSES);
        if (w == p && rnd(w) % 2000 == 0) { /* this thread also destroys and recreates */
            pthread_rwlock_wrlock(&bus_lock[b]);
            if (qtbus_bus_destroy(buses[b]) != QTBUS_OK) violation("bus destroy failed");
            buses[b] = qtbus_bus_create();
            atomic_fetch_add(&bus_generation[b], 1);
            pthread_rwlock_unlock(&bus_lock[b]);
            atomic_fetch_add(&ops[F_DESTROY], 1);
            continue;
        }
        pthread_rwlock_rdlock(&bus_lock[b]);
        one_call(w, b);
        pthread_rwlock_unlock(&bus_lock[b]);
    }
    return NULL;
}

static double heap_mb(void)
{
    struct mallinfo2 m = mallinfo2();
    return (double)(m.uordblks + m.hblkhd) / 1048576.0;
}

static double rss_mb(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f && fscanf(f, "%ld %ld", &size, &resident) != 2) resident = 0;
    if (f) fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

int main(int argc, char **argv)
{
    int seconds = argc > 1 ? atoi(argv[1]) : 10;
    if (seconds < 2) seconds = 2;
    queue = qtbus_queue_create("soak");
    for (int b = 0; b < BUSES; b++) {
        buses[b] = qtbus_bus_create();
        pthread_rwlock_init(&bus_lock[b], NULL);
    }
    static worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        pthread_create(&threads[i], NULL, worker_main, &workers[i]);
    }
    int warm = seconds / 5 > 0 ? seconds / 5 : 1;
    double heap_warm = 0, heap_end = 0, rss_warm = 0, rss_end = 0;
    printf("soak: %d s, %d threads, %d buses; heap in use / RSS (MB) each second:", seconds, THREADS, BUSES);
    for (int s = 1; s <= seconds; s++) {
        sleep(1);
        double h = heap_mb(), r = rss_mb();
        printf(" %.1f/%.1f", h, r);
        fflush(stdout);
        if (s == warm) heap_warm = h, rss_warm = r;
        heap_end = h, rss_end = r;
    }
    printf("\n");
    atomic_store(&stop, 1);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    for (int b = 0; b < BUSES; b++)
        if (qtbus_bus_destroy(buses[b]) != QTBUS_OK) violation("final bus destroy failed");
    qtbus_queue_release(queue);
    /* Queued releases and deliveries finish on the queue: wait for them (bounded). */
    for (int i = 0; i < 1000 && (atomic_load(&released) != atomic_load(&subscribed) ||
                                 atomic_load(&objects_released) != atomic_load(&objects_made));
         i++)
        usleep(10000);
    unsigned long total = 0;
    for (int f = 0; f < NF; f++)
        total += atomic_load(&ops[f]);
    printf("soak: %.0f calls/s in all;", (double)total / seconds);
    for (int f = 0; f < NF; f++)
        printf(" %s %.0f/s%s", family[f], (double)atomic_load(&ops[f]) / seconds, f + 1 < NF ? "," : "\n");
    printf("soak: %ld subscriptions, %ld released; %ld objects, %ld released\n", atomic_load(&subscribed),
           atomic_load(&released), atomic_load(&objects_made), atomic_load(&objects_released));
    if (atomic_load(&released) != atomic_load(&subscribed)) violation("rule 1: a release never ran");
    if (atomic_load(&objects_released) != atomic_load(&objects_made)) violation("an object was not released once");
    printf("soak: heap in use after warm-up %.1f MB, at the end %.1f MB; RSS %.1f MB, %.1f MB\n", heap_warm, heap_end,
           rss_warm, rss_end);
    if (heap_warm == 0 && heap_end == 0)
        printf("soak: no heap figures: the allocator is not glibc's (AddressSanitizer's checks for leaks at exit)\n");
    else if (heap_end > heap_warm * 1.10 + 2.0)
        violation("the heap in use grew after the warm-up");
    printf("soak: handler starts after the dispose returned, by a dispatch already in progress "
           "(allowed by rule 2): %lu\n",
           atomic_load(&inflight_starts));
    printf("soak: violations: %lu\n", atomic_load(&violations));
    return atomic_load(&violations) == 0 ? 0 : 1;
}
