/* SPDX-License-Identifier: MIT */
/*
 * test_request: request and reply (SXMessageTransfer).
 *
 * Users rely on: every receiver of a request being able to answer the sender zero or
 * more times, each reply reaching on_reply at once on the replying thread, in handler
 * order for synchronous handlers; the completion (release) running exactly once, after
 * the last handler that received the request returned -- before qtbus_request returns
 * when all were synchronous, after the queued ones otherwise; the count of handlers
 * reached; replies to anything but a request being refused.
 *
 * The scenario is the one SXMessageTransfer was built for: a login screen sends
 * {"account","pwd"}, the auth service (priority 700) answers "login ok" or "bad
 * credentials", a logger (default priority) only observes.
 */
#include "test_util.h"

static qtbus_bus *bus;
static pthread_t main_thread;

#define MAX_REPLIES 16
typedef struct sender {
    char replies[MAX_REPLIES][64];
    atomic_int reply_count;
    atomic_int completions;
    atomic_int replies_at_completion;
    atomic_int replies_on_main;
    atomic_int stop_rc;
    atomic_int reply_to_reply_rc;
} sender;

static void sender_init(sender *s)
{
    memset(s, 0, sizeof *s);
    atomic_init(&s->stop_rc, 1);
    atomic_init(&s->reply_to_reply_rc, 1);
}

static void on_reply(const qtbus_event *reply, void *userdata)
{
    sender *s = (sender *)userdata;
    size_t size = 0;
    const char *data = (const char *)qtbus_event_data(reply, &size);
    int i = atomic_fetch_add(&s->reply_count, 1);
    CHECK(i < MAX_REPLIES);
    CHECK(size < sizeof s->replies[i]);
    if (size) memcpy(s->replies[i], data, size);
    s->replies[i][size] = 0;
    CHECK_EQ_STR(qtbus_event_type(reply), "Login");
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&s->replies_on_main, 1);
    atomic_store(&s->stop_rc, qtbus_event_stop(reply));
    atomic_store(&s->reply_to_reply_rc, qtbus_event_reply(reply, "x", 1));
}

static void on_complete(void *userdata)
{
    sender *s = (sender *)userdata;
    atomic_store(&s->replies_at_completion, atomic_load(&s->reply_count));
    atomic_fetch_add(&s->completions, 1);
}

/* ---- the receivers ---- */
typedef struct auth {
    atomic_int calls;
    atomic_int on_main;
    tu_gate *gate; /* nullable: holds the queued auth service until opened */
} auth;

static void auth_handler(const qtbus_event *e, void *userdata)
{
    auth *a = (auth *)userdata;
    if (a->gate) tu_gate_pass(a->gate);
    atomic_fetch_add(&a->calls, 1);
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&a->on_main, 1);
    size_t size = 0;
    const char *json = (const char *)qtbus_event_data(e, &size);
    static const char good[] = "{\"account\":\"alice\",\"pwd\":\"secret\"}";
    if (size == sizeof good - 1 && memcmp(json, good, size) == 0)
        CHECK_EQ_INT(qtbus_event_reply(e, "login ok", 8), QTBUS_OK);
    else
        CHECK_EQ_INT(qtbus_event_reply(e, "bad credentials", 15), QTBUS_OK);
}

typedef struct logger {
    atomic_int seen;
    char last[128];
} logger;

static void logger_handler(const qtbus_event *e, void *userdata)
{
    logger *l = (logger *)userdata;
    size_t size = 0;
    const char *data = (const char *)qtbus_event_data(e, &size);
    CHECK(size < sizeof l->last);
    memcpy(l->last, data, size);
    l->last[size] = 0;
    atomic_fetch_add(&l->seen, 1);
}

static int send_login(const char *json, sender *s)
{
    qtbus_event_desc d = tu_event("Login", NULL);
    d.data = json;
    d.size = strlen(json);
    return qtbus_request(bus, &d, on_reply, s, on_complete);
}

/* Several replies from one handler, and a second handler replying after it. */
static void three_replies(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_reply(e, "one", 3), QTBUS_OK);
    CHECK_EQ_INT(qtbus_event_reply(e, "two", 3), QTBUS_OK);
    CHECK_EQ_INT(qtbus_event_reply(e, NULL, 0), QTBUS_OK);
    CHECK_EQ_INT(qtbus_event_reply(e, NULL, 1), QTBUS_EINVAL);
}

static void last_reply(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_reply(e, "last", 4), QTBUS_OK);
}

static void stopper(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    CHECK_EQ_INT(qtbus_event_reply(e, "stopped", 7), QTBUS_OK);
    CHECK_EQ_INT(qtbus_event_stop(e), QTBUS_OK);
}

/* A plain dispatch reaching a handler that tries to reply. */
static atomic_int plain_reply_rc;
static void plain_replier(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    atomic_store(&plain_reply_rc, qtbus_event_reply(e, "no", 2));
}

static atomic_int object_released;

int main(void)
{
    main_thread = pthread_self();
    bus = qtbus_bus_create();
    CHECK(bus != NULL);

    static auth sync_auth;
    static logger log;
    qtbus_sub_options hi = tu_options();
    hi.priority = 700;
    qtbus_token auth_token, log_token;
    /* The logger subscribes first: priority, not subscription order, puts auth first. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Login", NULL, logger_handler, &log, NULL, &log_token), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Login", &hi, auth_handler, &sync_auth, NULL, &auth_token), QTBUS_OK);

    /* Synchronous: the reply and the completion happen inside qtbus_request. */
    {
        static sender s;
        sender_init(&s);
        CHECK_EQ_INT(send_login("{\"account\":\"alice\",\"pwd\":\"secret\"}", &s), 2);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(atomic_load(&s.reply_count), 1);
        CHECK_EQ_STR(s.replies[0], "login ok");
        CHECK_EQ_INT(atomic_load(&s.replies_on_main), 1);
        CHECK_EQ_INT(atomic_load(&s.replies_at_completion), 1);
        CHECK_EQ_INT(atomic_load(&log.seen), 1);
        CHECK_EQ_STR(log.last, "{\"account\":\"alice\",\"pwd\":\"secret\"}");
        /* A reply cannot be stopped or answered. */
        CHECK_EQ_INT(atomic_load(&s.stop_rc), QTBUS_EINVAL);
        CHECK_EQ_INT(atomic_load(&s.reply_to_reply_rc), QTBUS_EINVAL);

        sender_init(&s);
        CHECK_EQ_INT(send_login("{\"account\":\"alice\",\"pwd\":\"wrong\"}", &s), 2);
        CHECK_EQ_INT(atomic_load(&s.reply_count), 1);
        CHECK_EQ_STR(s.replies[0], "bad credentials");
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(atomic_load(&log.seen), 2);
    }

    /* The auth service on a serial queue: replies come on that queue's thread, and the
     * completion waits for it, however late it runs. */
    CHECK_EQ_INT(qtbus_token_dispose(auth_token), QTBUS_OK);
    {
        qtbus_queue *q = qtbus_queue_create("request.auth");
        static tu_gate gate;
        static auth queued_auth;
        queued_auth.gate = &gate;
        qtbus_sub_options o = tu_options();
        o.priority = 700;
        o.queue = q;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Login", &o, auth_handler, &queued_auth, NULL, &auth_token), QTBUS_OK);

        static sender s;
        sender_init(&s);
        CHECK_EQ_INT(send_login("{\"account\":\"alice\",\"pwd\":\"secret\"}", &s), 2);
        /* The logger ran; the auth service is held at the gate: not complete yet. */
        CHECK_EQ_INT(atomic_load(&log.seen), 3);
        CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_bus_wait_idle(bus, 20), QTBUS_ETIMEDOUT); /* the held delivery */
        CHECK_EQ_INT(atomic_load(&s.completions), 0);
        CHECK_EQ_INT(atomic_load(&s.reply_count), 0);
        atomic_store(&gate.open, 1);
        CHECK_IDLE(bus);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(atomic_load(&s.reply_count), 1);
        CHECK_EQ_STR(s.replies[0], "login ok");
        CHECK_EQ_INT(atomic_load(&s.replies_on_main), 0);
        CHECK_EQ_INT(atomic_load(&s.replies_at_completion), 1);
        CHECK_EQ_INT(atomic_load(&queued_auth.on_main), 0);
        CHECK_IDLE(bus); /* nothing left that could complete it again */
        CHECK_EQ_INT(atomic_load(&s.completions), 1);

        /* Disposed while its delivery is queued: dropped (rule 2), and the request still
         * completes exactly once, with no reply. */
        atomic_store(&gate.open, 0);
        atomic_store(&gate.entered, 0);
        qtbus_sub_options ob = tu_options();
        ob.queue = q;
        qtbus_token blocker_token;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Block", &ob, tu_gate_handler, &gate, NULL, &blocker_token), QTBUS_OK);
        qtbus_event_desc block = tu_event("Block", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &block), 1);
        CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);
        sender_init(&s);
        CHECK_EQ_INT(send_login("{\"account\":\"alice\",\"pwd\":\"secret\"}", &s), 2);
        CHECK_EQ_INT(qtbus_token_dispose(auth_token), QTBUS_OK);
        atomic_store(&gate.open, 1);
        CHECK_IDLE(bus);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(atomic_load(&s.reply_count), 0);
        CHECK_EQ_INT(qtbus_token_dispose(blocker_token), QTBUS_OK);
        qtbus_queue_release(q);
    }
    CHECK_EQ_INT(qtbus_token_dispose(log_token), QTBUS_OK);

    /* Several replies from one handler, in handler order; stop ends the delivery. */
    {
        qtbus_token a, b, c;
        qtbus_sub_options first = tu_options();
        first.priority = 10;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Multi", &first, three_replies, NULL, NULL, &a), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "Multi", NULL, last_reply, NULL, NULL, &b), QTBUS_OK);
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = tu_event("Multi", NULL);
        /* on_reply checks the type is "Login": use a local reply handler instead. */
        CHECK_EQ_INT(qtbus_request(bus, &d, NULL, &s, on_complete), 2);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);

        /* With the stopper in front, only it answers. */
        qtbus_sub_options top = tu_options();
        top.priority = 100;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Multi", &top, stopper, NULL, NULL, &c), QTBUS_OK);
        sender_init(&s);
        CHECK_EQ_INT(qtbus_request(bus, &d, NULL, &s, on_complete), 1);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(qtbus_token_dispose(c), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(a), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(b), QTBUS_OK);
    }

    /* Replies in handler order, through the Login-typed sender. */
    {
        qtbus_token a, b;
        qtbus_sub_options first = tu_options();
        first.priority = 10;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Login", &first, three_replies, NULL, NULL, &a), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(bus, "Login", NULL, last_reply, NULL, NULL, &b), QTBUS_OK);
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = tu_event("Login", NULL);
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), 2);
        CHECK_EQ_INT(atomic_load(&s.reply_count), 4);
        CHECK_EQ_STR(s.replies[0], "one");
        CHECK_EQ_STR(s.replies[1], "two");
        CHECK_EQ_STR(s.replies[2], "");
        CHECK_EQ_STR(s.replies[3], "last");
        CHECK_EQ_INT(atomic_load(&s.replies_at_completion), 4);
        CHECK_EQ_INT(qtbus_token_dispose(a), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(b), QTBUS_OK);
    }

    /* Nobody listening: 0 handlers, completed at once, the object released once. */
    {
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = tu_event("Nobody", NULL);
        atomic_store(&object_released, 0);
        d.object = &object_released;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), 0);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(atomic_load(&object_released), 1);
        /* NULL release: fine, nothing to call. */
        CHECK_EQ_INT(qtbus_request(bus, &d, NULL, NULL, NULL), 0);
        CHECK_EQ_INT(atomic_load(&object_released), 2);
    }

    /* A request redirected to QTNoSubscriberEvent is not a request there. */
    {
        qtbus_token t;
        atomic_store(&plain_reply_rc, 1);
        CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_NO_SUBSCRIBER_TYPE, NULL, plain_replier, NULL, NULL, &t), QTBUS_OK);
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = tu_event("Unheard", NULL);
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), 0);
        CHECK_EQ_INT(atomic_load(&plain_reply_rc), QTBUS_EINVAL);
        CHECK_EQ_INT(atomic_load(&s.completions), 1);
        CHECK_EQ_INT(atomic_load(&s.reply_count), 0);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* Replying to a plain dispatch is refused. */
    {
        qtbus_token t;
        atomic_store(&plain_reply_rc, 1);
        CHECK_EQ_INT(qtbus_subscribe(bus, "Plain", NULL, plain_replier, NULL, NULL, &t), QTBUS_OK);
        qtbus_event_desc d = tu_event("Plain", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_EQ_INT(atomic_load(&plain_reply_rc), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }

    /* Bad input: refused, nothing called, nothing taken. */
    {
        static sender s;
        sender_init(&s);
        qtbus_event_desc d = tu_event("Login", NULL);
        d.flags = QTBUS_EVENT_STICKY;
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), QTBUS_EINVAL);
        d.flags = 1u << 7;
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), QTBUS_EINVAL);
        d = tu_event("Login", NULL);
        d.size = 3;
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), QTBUS_EINVAL);
        d = tu_event("", NULL);
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), QTBUS_EINVAL);
        d = tu_event("Login", "\xff");
        CHECK_EQ_INT(qtbus_request(bus, &d, on_reply, &s, on_complete), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_request(NULL, &d, on_reply, &s, on_complete), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_request(bus, NULL, on_reply, &s, on_complete), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_event_reply(NULL, "x", 1), QTBUS_EINVAL);
        CHECK_EQ_INT(atomic_load(&s.completions), 0);
    }

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_request: passed\n");
    return 0;
}
