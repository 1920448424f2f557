/* SPDX-License-Identifier: MIT */
/*
 * A user's threaded program, for scripts/sanitize.sh user-tsan: built with
 * -fsanitize=thread against the normal installed library (which ThreadSanitizer does
 * not instrument), it must get no report.  It relies only on what qtbus.h promises:
 *
 *   - userdata written before qtbus_subscribe() is read by the handler on any thread;
 *   - what a handler wrote is seen by the release hook, which frees the userdata
 *     (lifetime rule 1), whichever thread runs it;
 *   - an event's object written before qtbus_dispatch() is read by handlers on queues,
 *     and freed by object_release after the last of them.
 *
 * Each of these is a happens-before edge the library makes with its own
 * synchronisation, which ThreadSanitizer cannot see unless the library says so.
 */
#include <qtbus.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* One dispatching thread: two would run the direct handler concurrently, a race of
 * this program's own (its counter is plain). */
enum { ROUNDS = 300, DISPATCHERS = 1 };

struct counter {
    long hits; /* plain: each handler runs on one thread at a time */
    long seen;
};

struct object {
    long payload[4]; /* plain: written before the dispatch, read by the handlers */
};

static qtbus_bus *bus;
static qtbus_queue *queue;
static atomic_int stop;
static atomic_long released, objects_freed, objects_made;

static void on_event(const qtbus_event *event, void *userdata)
{
    struct counter *c = userdata;
    const struct object *o = qtbus_event_object(event);
    if (o) c->seen += o->payload[0] + o->payload[3];
    c->hits++;
}

static void release_counter(void *userdata)
{
    struct counter *c = userdata;
    if (c->hits < 0 || c->seen < 0) abort(); /* reads what the handlers wrote */
    free(c);
    atomic_fetch_add(&released, 1);
}

static void free_object(void *object)
{
    struct object *o = object;
    if (o->payload[1] != 7) abort();
    free(o);
    atomic_fetch_add(&objects_freed, 1);
}

static void *dispatcher(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        struct object *o = malloc(sizeof *o);
        o->payload[0] = 1;
        o->payload[1] = 7;
        o->payload[2] = 0;
        o->payload[3] = 2;
        atomic_fetch_add(&objects_made, 1);
        qtbus_event_desc d = {.type = "Tick", .object = o, .object_release = free_object};
        if (qtbus_dispatch(bus, &d) < 0) free_object(o);
    }
    return NULL;
}

int main(void)
{
    bus = qtbus_bus_create();
    queue = qtbus_queue_create("user-tsan");
    if (!bus || !queue) return 1;
    pthread_t threads[DISPATCHERS];
    for (int i = 0; i < DISPATCHERS; i++)
        pthread_create(&threads[i], NULL, dispatcher, NULL);

    long made = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct counter *direct = calloc(1, sizeof *direct);
        struct counter *queued = calloc(1, sizeof *queued);
        qtbus_sub_options on_queue = {.queue = queue};
        qtbus_token a, b;
        if (qtbus_subscribe(bus, "Tick", NULL, on_event, direct, release_counter, &a) != QTBUS_OK) return 1;
        if (qtbus_subscribe(bus, "Tick", &on_queue, on_event, queued, release_counter, &b) != QTBUS_OK) return 1;
        made += 2;
        struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
        qtbus_token_dispose(a);
        qtbus_token_dispose(b);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < DISPATCHERS; i++)
        pthread_join(threads[i], NULL);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    /* Releases and object frees still queued run on the queue. */
    for (int i = 0;
         i < 5000 && (atomic_load(&released) != made || atomic_load(&objects_freed) != atomic_load(&objects_made));
         i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    printf("user-tsan: %ld subscriptions released of %ld, %ld objects freed of %ld\n", atomic_load(&released), made,
           atomic_load(&objects_freed), atomic_load(&objects_made));
    return atomic_load(&released) == made && atomic_load(&objects_freed) == atomic_load(&objects_made) ? 0 : 1;
}
