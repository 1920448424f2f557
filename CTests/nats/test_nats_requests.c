/* SPDX-License-Identifier: MIT */
/*
 * test_nats_requests.c -- qtbus_request on an exported type reaches remote handlers:
 * their replies call the requester's on_reply (on its bridge's thread), and the
 * completion runs once every bridge that acknowledged the request is done and the
 * acknowledgement window (request_timeout_ms / 20) has passed, or at the timeout.
 * Late answers are dropped; a requester closed with requests open completes them.
 */
#include "nats_server.h"

#include <qtbus_nats.h>

/* Generous, so that the acknowledgement window (TIMEOUT_MS / 20) holds under valgrind;
 * the timeout case has a bridge of its own with a short one. */
enum { TIMEOUT_MS = 10000, SHORT_TIMEOUT_MS = 1500 };

static ns_server server;

typedef struct sender {
    pthread_mutex_t lock;
    int replies;
    int completions;
    int replies_after_completion;
    char last[64];
    int64_t completed_ms;
    pthread_t reply_thread;
} sender;

static void sender_init(sender *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
}

static void on_reply(const qtbus_event *reply, void *userdata)
{
    sender *s = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(reply, &size);
    pthread_mutex_lock(&s->lock);
    if (s->completions) s->replies_after_completion++;
    s->replies++;
    snprintf(s->last, sizeof s->last, "%.*s", (int)size, data ? data : "");
    s->reply_thread = pthread_self();
    pthread_mutex_unlock(&s->lock);
}

static void on_complete(void *userdata)
{
    sender *s = userdata;
    pthread_mutex_lock(&s->lock);
    s->completions++;
    s->completed_ms = tu_now_ms();
    pthread_mutex_unlock(&s->lock);
}

static int completions(sender *s)
{
    pthread_mutex_lock(&s->lock);
    int n = s->completions;
    pthread_mutex_unlock(&s->lock);
    return n;
}

/* Replies with its userdata's text. */
static void answer(const qtbus_event *e, void *userdata)
{
    CHECK_EQ_INT(qtbus_event_flags(e), QTBUS_EVENT_REQUEST);
    CHECK_EQ_INT(qtbus_event_reply(e, userdata, strlen(userdata)), QTBUS_OK);
}

/* Answers twice on a queue, after the dispatch returned. */
static void answer_twice(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    tu_sleep_ms(50);
    CHECK_EQ_INT(qtbus_event_reply(e, "q1", 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_event_reply(e, "q2", 2), QTBUS_OK);
}

/* Set on the answering bridge's thread, taken by the test's. */
static _Atomic uint64_t never_finished;
static void defer_forever(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    qtbus_deferred d;
    CHECK_EQ_INT(qtbus_event_defer(e, &d), QTBUS_OK);
    atomic_store(&never_finished, d.id);
}

static qtbus_deferred take_never_finished(void)
{
    CHECK_WAIT(atomic_load(&never_finished) != 0, TU_WAIT_MS);
    return (qtbus_deferred){atomic_exchange(&never_finished, 0)};
}

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create(), *c = qtbus_bus_create();
    qtbus_nats *ba = ns_bridge(&server, a, TIMEOUT_MS, 0), *bb = ns_bridge(&server, b, TIMEOUT_MS, 0),
               *bc = ns_bridge(&server, c, TIMEOUT_MS, 0);
    qtbus_queue *queue = qtbus_queue_create("answers");

    CHECK_EQ_INT(qtbus_nats_export(ba, "Lookup"), QTBUS_OK);
    /* b both imports and exports Lookup: the request it answers is not published again. */
    CHECK_EQ_INT(qtbus_nats_import(bb, "Lookup"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(bb, "Lookup"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bc, "Lookup"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(a, "Lookup", NULL, answer, "local", NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(b, "Lookup", NULL, answer, "from b", NULL, NULL), QTBUS_OK);
    qtbus_sub_options on_queue = {.queue = queue};
    CHECK_EQ_INT(qtbus_subscribe(c, "Lookup", &on_queue, answer_twice, NULL, NULL, NULL), QTBUS_OK);

    /* Two remote bridges: 1 + 2 remote replies and the local one; completion after the
     * last of them, well before the timeout. */
    {
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = {.type = "Lookup", .subtype = "user", .data = "42", .size = 2};
        int64_t start = tu_now_ms();
        CHECK_EQ_INT(qtbus_request(a, &d, on_reply, &s, on_complete), 2); /* local + export */
        CHECK_EQ_INT(s.replies, 1);
        CHECK_EQ_STR(s.last, "local");
        CHECK_WAIT(completions(&s) == 1, TU_WAIT_MS);
        int64_t took = s.completed_ms - start;
        printf("two remote bridges: %d replies, completed after %lld ms (window %d ms, timeout %d ms)\n", s.replies,
               (long long)took, TIMEOUT_MS / 20, TIMEOUT_MS);
        CHECK_EQ_INT(s.replies, 4);
        CHECK(took >= TIMEOUT_MS / 20 && took < TIMEOUT_MS);
        CHECK(!pthread_equal(s.reply_thread, pthread_self()));
        tu_sleep_ms(200);
        CHECK_EQ_INT(s.replies_after_completion, 0);
        CHECK_EQ_INT(completions(&s), 1);
    }

    /* Nobody imports the type: the request completes after the window alone. */
    {
        static sender s;
        sender_init(&s);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Nobody"), QTBUS_OK);
        qtbus_event_desc d = {.type = "Nobody"};
        int64_t start = tu_now_ms();
        CHECK_EQ_INT(qtbus_request(a, &d, on_reply, &s, on_complete), 1);
        CHECK_WAIT(completions(&s) == 1, TU_WAIT_MS);
        int64_t took = s.completed_ms - start;
        printf("no remote bridge: completed after %lld ms\n", (long long)took);
        CHECK(took >= TIMEOUT_MS / 20 && took < TIMEOUT_MS / 2);
        CHECK_EQ_INT(s.replies, 0);
    }

    /* A remote handler that never finishes: the requester completes at the timeout, and
     * what that handler answers later is dropped. */
    {
        qtbus_bus *d_bus = qtbus_bus_create();
        qtbus_nats *bd = ns_bridge(&server, d_bus, SHORT_TIMEOUT_MS, 0);
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(c, "Slow", NULL, defer_forever, NULL, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bc, "Slow"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(bd, "Slow"), QTBUS_OK);
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = {.type = "Slow"};
        int64_t start = tu_now_ms();
        CHECK_EQ_INT(qtbus_request(d_bus, &d, on_reply, &s, on_complete), 1);
        CHECK_WAIT(completions(&s) == 1, TU_WAIT_MS);
        int64_t took = s.completed_ms - start;
        printf("a remote handler that never finishes: completed after %lld ms (timeout %d ms)\n", (long long)took,
               SHORT_TIMEOUT_MS);
        CHECK(took >= SHORT_TIMEOUT_MS && took < SHORT_TIMEOUT_MS + 5000);
        qtbus_deferred late = take_never_finished();
        CHECK_EQ_INT(qtbus_deferred_reply(late, "late", 4), QTBUS_OK);
        CHECK_EQ_INT(qtbus_deferred_finish(late), QTBUS_OK);
        tu_sleep_ms(200);
        CHECK_EQ_INT(s.replies, 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_close(bd), QTBUS_OK);
        CHECK_EQ_INT(qtbus_bus_destroy(d_bus), QTBUS_OK);
    }

    /* Closed with a request open: the requester's completion runs in close. */
    {
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(c, "Slow", NULL, defer_forever, NULL, NULL, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Slow"), QTBUS_OK);
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = {.type = "Slow"};
        CHECK_EQ_INT(qtbus_request(a, &d, on_reply, &s, on_complete), 1);
        tu_sleep_ms(100);
        CHECK_EQ_INT(completions(&s), 0);
        CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
        CHECK_EQ_INT(completions(&s), 1);
        CHECK_EQ_INT(qtbus_deferred_finish(take_never_finished()), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bc), QTBUS_OK);
    qtbus_queue_release(queue);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(c), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_requests: passed\n");
    return 0;
}
