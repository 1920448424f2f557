/* SPDX-License-Identifier: MIT */
/*
 * test_queue_thread_names: a created queue's work runs on a thread named after the
 * queue (qtbus.h, qtbus_queue_create), as top -H and gdb show it, read here from
 * /proc/self/task/<tid>/comm inside the handlers:
 *   - a short label is the name; a long one is cut to 15 bytes; one whose 15th byte is
 *     inside a UTF-8 character is cut before that character; NULL and "" are
 *     "qtbus.queue";
 *   - two queues whose deliveries alternate, on whatever threads libdispatch picks:
 *     each handler sees its own queue's name, every time (a thread that moves from one
 *     queue's work to the other's is renamed);
 *   - a bounded queue (qtbus_queue_set_limit: its work runs from a ring) too;
 *   - the thread keeps the name once the work is done (read from this thread, the queue
 *     idle);
 *   - the main queue's handler runs on the program's main thread, whose name is left
 *     as it was.
 */
#include "test_util.h"

#include <unistd.h>

/* The calling thread's tid, from /proc/thread-self (a link to <pid>/task/<tid>). */
static long my_tid(void)
{
    char link[64];
    ssize_t n = readlink("/proc/thread-self", link, sizeof link - 1);
    CHECK(n > 0);
    link[n] = '\0';
    const char *slash = strrchr(link, '/');
    CHECK(slash != NULL);
    return strtol(slash + 1, NULL, 10);
}

/* /proc/self/task/<tid>/comm, without its newline. */
static void comm_of(long tid, char *out, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/comm", tid);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    CHECK(fgets(out, (int)size, f) != NULL);
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* What a handler saw: the name of its thread each time, checked against `want`. */
typedef struct seen {
    const char *want;
    atomic_int calls, wrong;
    atomic_long tid;
    char first_wrong[32];
} seen;

static void look(const qtbus_event *e, void *userdata)
{
    (void)e;
    seen *s = userdata;
    long tid = my_tid();
    char name[32];
    comm_of(tid, name, sizeof name);
    if (strcmp(name, s->want) != 0 && atomic_fetch_add(&s->wrong, 1) == 0)
        snprintf(s->first_wrong, sizeof s->first_wrong, "%s", name);
    atomic_store(&s->tid, tid);
    atomic_fetch_add(&s->calls, 1);
}

static qtbus_token on(qtbus_bus *bus, const char *type, qtbus_queue *q, seen *s)
{
    qtbus_sub_options o = {.queue = q};
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, type, &o, look, s, NULL, &t), QTBUS_OK);
    return t;
}

static void send(qtbus_bus *bus, const char *type)
{
    qtbus_event_desc d = tu_event(type, NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

/* One event on a queue labelled `label`: its handler's thread is named `want`. */
static void one(qtbus_bus *bus, const char *label, const char *want)
{
    qtbus_queue *q = qtbus_queue_create(label);
    CHECK(q != NULL);
    seen s = {.want = want};
    qtbus_token t = on(bus, "Named", q, &s);
    send(bus, "Named");
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&s.calls), 1);
    CHECK_MSG(atomic_load(&s.wrong) == 0, "label \"%s\": the thread was named \"%s\", not \"%s\"",
              label ? label : "(NULL)", s.first_wrong, want);
    printf("label %-32s thread %s\n", label ? label : "NULL", want);
    /* Kept after the work: the queue is idle, its thread not yet given other work. */
    char after[32];
    comm_of(atomic_load(&s.tid), after, sizeof after);
    CHECK_EQ_STR(after, want);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    qtbus_queue_release(q);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();

    one(bus, "orders", "orders");
    one(bus, "exactly-15-byte", "exactly-15-byte");
    one(bus, "a-queue-label-longer-than-15", "a-queue-label-l");
    /* "abcdefghijklm" + "é" (C3 A9) + "x": bytes 14 and 15 hold the é, which would be
     * cut in two: cut before it. */
    one(bus, "abcdefghijklmn\xc3\xa9x", "abcdefghijklmn");
    /* "Δ" (CE 94) at bytes 13 and 14 fits; byte 15 starts the next character. */
    one(bus, "abcdefghijklm\xce\x94xyz", "abcdefghijklm\xce\x94");
    one(bus, NULL, "qtbus.queue");
    one(bus, "", "qtbus.queue");

    /* Two queues, their deliveries alternating, each waited for: the pool's threads
     * move between them, and are renamed as they do. */
    {
        qtbus_queue *qa = qtbus_queue_create("queue-a"), *qb = qtbus_queue_create("queue-b");
        seen sa = {.want = "queue-a"}, sb = {.want = "queue-b"};
        qtbus_token ta = on(bus, "A", qa, &sa), tb = on(bus, "B", qb, &sb);
        for (int i = 0; i < 200; i++) {
            send(bus, "A");
            CHECK_IDLE(bus);
            send(bus, "B");
            CHECK_IDLE(bus);
        }
        /* And at once, both queues busy together. */
        for (int i = 0; i < 1000; i++) {
            send(bus, "A");
            send(bus, "B");
        }
        CHECK_IDLE(bus);
        printf("two queues alternating: %d and %d deliveries, wrong names %d and %d\n", atomic_load(&sa.calls),
               atomic_load(&sb.calls), atomic_load(&sa.wrong), atomic_load(&sb.wrong));
        CHECK_EQ_INT(atomic_load(&sa.calls), 1200);
        CHECK_EQ_INT(atomic_load(&sb.calls), 1200);
        CHECK_MSG(atomic_load(&sa.wrong) == 0, "queue-a's handler saw \"%s\"", sa.first_wrong);
        CHECK_MSG(atomic_load(&sb.wrong) == 0, "queue-b's handler saw \"%s\"", sb.first_wrong);
        CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(tb), QTBUS_OK);
        qtbus_queue_release(qa);
        qtbus_queue_release(qb);
    }

    /* A bounded queue: its work runs from its ring. */
    {
        qtbus_queue *q = qtbus_queue_create("bounded-queue");
        CHECK_EQ_INT(qtbus_queue_set_limit(q, 8, QTBUS_OVERFLOW_BLOCK, -1), QTBUS_OK);
        seen s = {.want = "bounded-queue"};
        qtbus_token t = on(bus, "Bounded", q, &s);
        for (int i = 0; i < 100; i++)
            send(bus, "Bounded");
        CHECK_IDLE(bus);
        printf("bounded queue: %d deliveries, wrong names %d\n", atomic_load(&s.calls), atomic_load(&s.wrong));
        CHECK_EQ_INT(atomic_load(&s.calls), 100);
        CHECK_MSG(atomic_load(&s.wrong) == 0, "the bounded queue's handler saw \"%s\"", s.first_wrong);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        qtbus_queue_release(q);
    }

    /* The main queue: the program's thread, its name left alone. */
    {
        char before[32];
        comm_of(my_tid(), before, sizeof before);
        seen s = {.want = before};
        qtbus_token t = on(bus, "Main", qtbus_queue_main(), &s);
        send(bus, "Main");
        CHECK_WAIT((qtbus_main_drain(), atomic_load(&s.calls) == 1), TU_WAIT_MS);
        CHECK(atomic_load(&s.tid) == my_tid());
        CHECK_MSG(atomic_load(&s.wrong) == 0, "the main queue's handler saw \"%s\", not \"%s\"", s.first_wrong, before);
        printf("main queue: the main thread, still \"%s\"\n", before);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_queue_thread_names: passed\n");
    return 0;
}
