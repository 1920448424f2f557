/* SPDX-License-Identifier: MIT */
/*
 * test_command: commands (ReactiveCocoa's RACCommand) in C.
 *
 * Users rely on: the command's events on its bus (subtype = its name) telling its state
 * in order -- executing "1" once when it starts, each value, the error with its message
 * before executing "0", enabled "0"/"1" as it becomes busy or disabled; execute refused
 * (QTBUS_EBUSY, nothing run) while executing unless concurrent, and while disabled; an
 * execution finishing exactly once (again: QTBUS_ESTALE); execute running on a queue
 * with its input copied; dispose letting running executions end while their sends and
 * finishes become stale; release exactly once after the last execute call returned.
 */
#include "test_util.h"

static qtbus_bus *bus;
static pthread_t main_thread;

/* ---- a recorder of the command's events: "E1", "V:bytes", "X:message", "N0" ---- */
#define LOG_MAX 256
typedef struct event_log {
    pthread_mutex_t lock;
    char entries[LOG_MAX][48];
    int count;
} event_log;

static event_log elog = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0};

static void log_handler(const qtbus_event *e, void *userdata)
{
    const char *tag = (const char *)userdata;
    size_t size = 0;
    const char *data = (const char *)qtbus_event_data(e, &size);
    pthread_mutex_lock(&elog.lock);
    CHECK(elog.count < LOG_MAX);
    char *out = elog.entries[elog.count++];
    CHECK(size + 3 < sizeof elog.entries[0]);
    if (tag[0] == 'E' || tag[0] == 'N') {
        CHECK_EQ_INT(size, 1);
        snprintf(out, sizeof elog.entries[0], "%s%c", tag, data[0]);
    } else {
        snprintf(out, sizeof elog.entries[0], "%s:%.*s", tag, (int)size, size ? data : "");
    }
    pthread_mutex_unlock(&elog.lock);
}

static void log_reset(void)
{
    pthread_mutex_lock(&elog.lock);
    elog.count = 0;
    pthread_mutex_unlock(&elog.lock);
}

/* Checks the log is exactly the NULL-terminated list of entries. */
static void log_expect(int line, const char *const *expected)
{
    pthread_mutex_lock(&elog.lock);
    int n = 0;
    while (expected[n])
        n++;
    int ok = n == elog.count;
    for (int i = 0; ok && i < n; i++)
        ok = strcmp(expected[i], elog.entries[i]) == 0;
    if (!ok) {
        fprintf(stderr, "line %d: command events:", line);
        for (int i = 0; i < elog.count; i++)
            fprintf(stderr, " %s", elog.entries[i]);
        fprintf(stderr, "\n  expected:");
        for (int i = 0; i < n; i++)
            fprintf(stderr, " %s", expected[i]);
        fprintf(stderr, "\n");
    }
    pthread_mutex_unlock(&elog.lock);
    CHECK(ok);
}
#define LOG_EXPECT(...) log_expect(__LINE__, (const char *const[]){__VA_ARGS__, NULL})

static void observe(const char *name, qtbus_bag bag)
{
    static const char *const types[] = {QTBUS_COMMAND_EXECUTING_TYPE, QTBUS_COMMAND_VALUE_TYPE,
                                        QTBUS_COMMAND_ERROR_TYPE, QTBUS_COMMAND_ENABLED_TYPE};
    static const char *const tags[] = {"E", "V", "X", "N"};
    for (int i = 0; i < 4; i++) {
        qtbus_sub_options o = tu_options();
        o.subtypes = &name;
        o.subtype_count = 1;
        o.bag = bag;
        CHECK_EQ_INT(qtbus_subscribe(bus, types[i], &o, log_handler, (void *)tags[i], NULL, NULL), QTBUS_OK);
    }
}

/* ---- the order in which one queue ran executions and deliveries ---- */
#define ORDER_N 300
static char order_seen[ORDER_N];
static atomic_int order_n;

static void order_record(char c)
{
    int i = atomic_load(&order_n);
    CHECK(i < ORDER_N);
    order_seen[i] = c;
    atomic_store(&order_n, i + 1);
}

static void order_delivery(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    order_record(*(const char *)qtbus_event_data(e, NULL));
}

/* ---- the command's userdata ---- */
typedef struct job {
    qtbus_command self;
    atomic_int calls;
    atomic_int releases;
    atomic_int running; /* execute calls in progress */
    atomic_int release_while_running;
    atomic_int executing_inside; /* qtbus_command_is_executing seen inside */
    atomic_int enabled_inside;
    atomic_int again_rc; /* a second execute from inside */
    atomic_int on_main;
    char input[64];
    atomic_int had_input;
    int mode;             /* what execute does, see job_execute */
    qtbus_execution kept; /* mode 1: finished later by the test */
    atomic_int kept_set;
} job;

static void job_init(job *j, int mode)
{
    memset(j, 0, sizeof *j);
    j->mode = mode;
    atomic_init(&j->again_rc, 1);
}

static void job_execute(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    job *j = (job *)userdata;
    atomic_fetch_add(&j->running, 1);
    atomic_fetch_add(&j->calls, 1);
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&j->on_main, 1);
    atomic_store(&j->executing_inside, qtbus_command_is_executing(j->self));
    atomic_store(&j->enabled_inside, qtbus_command_is_enabled(j->self));
    if (input) {
        size_t size = 0;
        const char *data = (const char *)qtbus_event_data(input, &size);
        CHECK(size < sizeof j->input);
        memcpy(j->input, data, size);
        j->input[size] = 0;
        CHECK_EQ_STR(qtbus_event_type(input), "LoginForm");
        CHECK_EQ_INT(qtbus_event_stop(input), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_event_reply(input, "x", 1), QTBUS_EINVAL);
        atomic_store(&j->had_input, 1);
    } else {
        atomic_store(&j->had_input, 0);
    }
    switch (j->mode) {
    case 0: /* two values and success, at once */
        atomic_store(&j->again_rc, qtbus_command_execute(j->self, NULL, NULL));
        CHECK_EQ_INT(qtbus_execution_send(execution, "a", 1), QTBUS_OK);
        CHECK_EQ_INT(qtbus_execution_send(execution, "bc", 2), QTBUS_OK);
        CHECK_EQ_INT(qtbus_execution_finish(execution, 0, NULL), QTBUS_OK);
        /* exactly once */
        CHECK_EQ_INT(qtbus_execution_finish(execution, 0, NULL), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_execution_send(execution, "late", 4), QTBUS_ESTALE);
        break;
    case 1: /* finished later, by the test */
        j->kept = execution;
        atomic_store(&j->kept_set, 1);
        break;
    case 2: /* fails at once */ CHECK_EQ_INT(qtbus_execution_finish(execution, 42, "bad credentials"), QTBUS_OK); break;
    case 3: /* records its input byte in the queue order log */
        order_record(j->input[0]);
        CHECK_EQ_INT(qtbus_execution_finish(execution, 0, NULL), QTBUS_OK);
        break;
    }
    atomic_fetch_sub(&j->running, 1);
}

static void job_release(void *userdata)
{
    job *j = (job *)userdata;
    if (atomic_load(&j->running) != 0) atomic_fetch_add(&j->release_while_running, 1);
    atomic_fetch_add(&j->releases, 1);
}

/* A handler of "executing 0" that executes the command again, once. */
static job *reenter_job;
static atomic_int reenter_rc;
static void reenter_on_idle(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const char *data = (const char *)qtbus_event_data(e, &size);
    if (data[0] == '0' && reenter_job) {
        job *j = reenter_job;
        reenter_job = NULL;
        atomic_store(&reenter_rc, qtbus_command_execute(j->self, NULL, NULL));
        /* Delivered after this handler returns, never nested in it. */
        pthread_mutex_lock(&elog.lock);
        int n = elog.count;
        pthread_mutex_unlock(&elog.lock);
        CHECK_EQ_STR(elog.entries[n - 1], "E0");
    }
}

static void finisher_thread(int index, void *ctx)
{
    (void)index;
    job *j = (job *)ctx;
    CHECK_EQ_INT(qtbus_execution_finish(j->kept, 7, "timeout"), QTBUS_OK);
}

int main(void)
{
    main_thread = pthread_self();
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
    observe("login", bag);

    /* The full life of a synchronous execution. */
    static job j;
    job_init(&j, 0);
    CHECK_EQ_INT(qtbus_command_create(bus, "login", 0, job_execute, &j, job_release, &j.self), QTBUS_OK);
    CHECK(j.self.id != 0);
    CHECK_EQ_INT(qtbus_command_is_executing(j.self), 0);
    CHECK_EQ_INT(qtbus_command_is_enabled(j.self), 1);
    {
        qtbus_event_desc in = tu_event("LoginForm", NULL);
        in.data = "alice:secret";
        in.size = 12;
        static atomic_int released;
        in.object = &released;
        in.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_command_execute(j.self, &in, NULL), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&released), 1);
    }
    CHECK_EQ_INT(atomic_load(&j.calls), 1);
    CHECK_EQ_INT(atomic_load(&j.on_main), 1);
    CHECK_EQ_STR(j.input, "alice:secret");
    CHECK_EQ_INT(atomic_load(&j.executing_inside), 1);
    CHECK_EQ_INT(atomic_load(&j.enabled_inside), 0);
    CHECK_EQ_INT(atomic_load(&j.again_rc), QTBUS_EBUSY);
    CHECK_EQ_INT(qtbus_command_is_executing(j.self), 0);
    CHECK_EQ_INT(qtbus_command_is_enabled(j.self), 1);
    LOG_EXPECT("E1", "N0", "V:a", "V:bc", "E0", "N1");

    /* No input: execute sees NULL. */
    log_reset();
    CHECK_EQ_INT(qtbus_command_execute(j.self, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&j.had_input), 0);
    LOG_EXPECT("E1", "N0", "V:a", "V:bc", "E0", "N1");

    /* Disabled: refused, nothing runs, enabled events say so. */
    log_reset();
    CHECK_EQ_INT(qtbus_command_set_enabled(j.self, 0), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_is_enabled(j.self), 0);
    CHECK_EQ_INT(qtbus_command_execute(j.self, NULL, NULL), QTBUS_EBUSY);
    CHECK_EQ_INT(atomic_load(&j.calls), 2);
    CHECK_EQ_INT(qtbus_command_set_enabled(j.self, 0), QTBUS_OK); /* no change, no event */
    CHECK_EQ_INT(qtbus_command_set_enabled(j.self, 1), QTBUS_OK);
    LOG_EXPECT("N0", "N1");

    /* Finished later, from another thread, with an error: the message comes first. */
    log_reset();
    j.mode = 1;
    CHECK_EQ_INT(qtbus_command_execute(j.self, NULL, NULL), QTBUS_OK);
    CHECK(atomic_load(&j.kept_set));
    CHECK_EQ_INT(qtbus_command_is_executing(j.self), 1);
    CHECK_EQ_INT(qtbus_command_execute(j.self, NULL, NULL), QTBUS_EBUSY);
    /* Disabled while running: it goes on; enabled stays 0 until both allow it. */
    CHECK_EQ_INT(qtbus_command_set_enabled(j.self, 0), QTBUS_OK);
    CHECK_EQ_INT(qtbus_execution_send(j.kept, "partial", 7), QTBUS_OK);
    tu_run_threads(1, finisher_thread, &j);
    CHECK_EQ_INT(qtbus_execution_finish(j.kept, 0, NULL), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_command_is_executing(j.self), 0);
    CHECK_EQ_INT(qtbus_command_is_enabled(j.self), 0);
    CHECK_EQ_INT(qtbus_command_set_enabled(j.self, 1), QTBUS_OK);
    LOG_EXPECT("E1", "N0", "V:partial", "X:timeout", "E0", "N1");

    /* A failure inside execute; a NULL message is an empty one. */
    log_reset();
    j.mode = 2;
    CHECK_EQ_INT(qtbus_command_execute(j.self, NULL, NULL), QTBUS_OK);
    LOG_EXPECT("E1", "N0", "X:bad credentials", "E0", "N1");

    /* Re-entrant: a handler of "executing 0" executes again; its events follow. */
    log_reset();
    j.mode = 0;
    {
        qtbus_token t;
        const char *name = "login";
        qtbus_sub_options o = tu_options();
        o.subtypes = &name;
        o.subtype_count = 1;
        CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_COMMAND_EXECUTING_TYPE, &o, reenter_on_idle, NULL, NULL, &t), QTBUS_OK);
        reenter_job = &j;
        atomic_store(&reenter_rc, 1);
        CHECK_EQ_INT(qtbus_command_execute(j.self, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&reenter_rc), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }
    LOG_EXPECT("E1", "N0", "V:a", "V:bc", "E0", "N1", "E1", "N0", "V:a", "V:bc", "E0", "N1");

    /* On a queue: execute runs there, the input copied, the object released after. */
    log_reset();
    {
        qtbus_queue *q = qtbus_queue_create("command.queue");
        char buffer[32] = "queued input";
        qtbus_event_desc in = tu_event("LoginForm", NULL);
        in.data = buffer;
        in.size = strlen(buffer);
        static atomic_int released;
        in.object = &released;
        in.object_release = tu_count_release;
        int calls = atomic_load(&j.calls);
        int on_main = atomic_load(&j.on_main);
        CHECK_EQ_INT(qtbus_command_execute(j.self, &in, q), QTBUS_OK);
        memset(buffer, 'z', sizeof buffer - 1); /* the caller's buffer is free at once */
        CHECK_WAIT(atomic_load(&released) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&j.calls), calls + 1);
        CHECK_EQ_INT(atomic_load(&j.on_main), on_main);
        CHECK_EQ_STR(j.input, "queued input");
        CHECK_WAIT(qtbus_command_is_executing(j.self) == 0, TU_WAIT_MS);
        qtbus_queue_release(q);
    }
    LOG_EXPECT("E1", "N0", "V:a", "V:bc", "E0", "N1");

    /* Executions and deliveries posted to one queue run in the order they were posted. */
    {
        qtbus_queue *q = qtbus_queue_create("command.order");
        qtbus_sub_options o = tu_options();
        o.queue = q;
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Order", &o, order_delivery, NULL, NULL, &t), QTBUS_OK);
        static job ordered;
        job_init(&ordered, 3);
        CHECK_EQ_INT(qtbus_command_create(bus, "ordered", QTBUS_COMMAND_CONCURRENT, job_execute, &ordered, job_release,
                                          &ordered.self),
                     QTBUS_OK);
        for (int i = 0; i < ORDER_N; i++) {
            char c = (char)('a' + i % 26);
            qtbus_event_desc d = tu_event("Order", NULL);
            d.data = &c;
            d.size = 1;
            if (i % 3 == 0) {
                d.type = "LoginForm";
                CHECK_EQ_INT(qtbus_command_execute(ordered.self, &d, q), QTBUS_OK);
            } else {
                CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
            }
        }
        CHECK_WAIT(atomic_load(&order_n) == ORDER_N, TU_WAIT_MS);
        for (int i = 0; i < ORDER_N; i++)
            CHECK_MSG(order_seen[i] == 'a' + i % 26, "position %d", i);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_command_dispose(ordered.self), QTBUS_OK);
        CHECK_WAIT(atomic_load(&ordered.releases) == 1, TU_WAIT_MS);
        qtbus_queue_release(q);
    }

    /* Concurrent: overlapping executions make one 1/0 pair, and it stays enabled. */
    static job c;
    job_init(&c, 1);
    observe("refresh", bag);
    CHECK_EQ_INT(qtbus_command_create(bus, "refresh", QTBUS_COMMAND_CONCURRENT, job_execute, &c, job_release, &c.self),
                 QTBUS_OK);
    log_reset();
    CHECK_EQ_INT(qtbus_command_execute(c.self, NULL, NULL), QTBUS_OK);
    qtbus_execution first = c.kept;
    CHECK_EQ_INT(atomic_load(&c.enabled_inside), 1);
    CHECK_EQ_INT(qtbus_command_execute(c.self, NULL, NULL), QTBUS_OK);
    qtbus_execution second = c.kept;
    CHECK(first.id != second.id);
    CHECK_EQ_INT(qtbus_command_is_enabled(c.self), 1);
    CHECK_EQ_INT(qtbus_execution_send(second, "s", 1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_execution_finish(first, 0, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_is_executing(c.self), 1);
    CHECK_EQ_INT(qtbus_execution_finish(second, 0, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_is_executing(c.self), 0);
    LOG_EXPECT("E1", "V:s", "E0");

    /* Dispose while an execution runs: it may go on, its sends and finish are stale,
     * nothing more is published, release runs once (now: no execute call is running). */
    log_reset();
    CHECK_EQ_INT(qtbus_command_execute(c.self, NULL, NULL), QTBUS_OK);
    qtbus_execution orphan = c.kept;
    CHECK_EQ_INT(qtbus_command_dispose(c.self), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&c.releases), 1);
    CHECK_EQ_INT(qtbus_execution_send(orphan, "x", 1), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_execution_finish(orphan, 0, NULL), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_command_dispose(c.self), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_command_execute(c.self, NULL, NULL), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_command_is_executing(c.self), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_command_is_enabled(c.self), QTBUS_ESTALE);
    CHECK_EQ_INT(qtbus_command_set_enabled(c.self, 1), QTBUS_ESTALE);
    LOG_EXPECT("E1");
    CHECK_EQ_INT(atomic_load(&c.release_while_running), 0);

    /* Dispose while an execute is still queued: it never runs; release follows it. */
    {
        qtbus_queue *q = qtbus_queue_create("command.blocked");
        static tu_gate gate;
        qtbus_sub_options o = tu_options();
        o.queue = q;
        qtbus_token hold;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Hold", &o, tu_gate_handler, &gate, NULL, &hold), QTBUS_OK);
        qtbus_event_desc d = tu_event("Hold", NULL);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
        CHECK_WAIT(atomic_load(&gate.entered) == 1, TU_WAIT_MS);
        static job later;
        job_init(&later, 0);
        CHECK_EQ_INT(qtbus_command_create(bus, "later", 0, job_execute, &later, job_release, &later.self), QTBUS_OK);
        qtbus_event_desc in = tu_event("LoginForm", NULL);
        static atomic_int released;
        in.object = &released;
        in.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_command_execute(later.self, &in, q), QTBUS_OK);
        CHECK_EQ_INT(qtbus_command_dispose(later.self), QTBUS_OK);
        CHECK_EQ_INT(atomic_load(&later.releases), 0); /* its execute is still queued */
        atomic_store(&gate.open, 1);
        CHECK_WAIT(atomic_load(&later.releases) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(atomic_load(&later.calls), 0);
        CHECK_EQ_INT(atomic_load(&released), 1);
        CHECK_EQ_INT(qtbus_token_dispose(hold), QTBUS_OK);
        qtbus_queue_release(q);
    }

    /* Bad input: refused, nothing made or run. */
    {
        qtbus_command k = {99};
        static job bad;
        job_init(&bad, 0);
        CHECK_EQ_INT(qtbus_command_create(NULL, "x", 0, job_execute, &bad, job_release, &k), QTBUS_EINVAL);
        CHECK_EQ_INT(k.id, 0);
        CHECK_EQ_INT(qtbus_command_create(bus, NULL, 0, job_execute, &bad, job_release, &k), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_command_create(bus, "", 0, job_execute, &bad, job_release, &k), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_command_create(bus, "\xc3", 0, job_execute, &bad, job_release, &k), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_command_create(bus, "x", 0, NULL, &bad, job_release, &k), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_command_create(bus, "x", 1u << 5, job_execute, &bad, job_release, &k), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_command_create(bus, "x", 0, job_execute, &bad, job_release, NULL), QTBUS_EINVAL);
        qtbus_event_desc in = tu_event("LoginForm", NULL);
        in.flags = QTBUS_EVENT_STICKY;
        CHECK_EQ_INT(qtbus_command_execute(j.self, &in, NULL), QTBUS_EINVAL);
        in = tu_event(NULL, NULL);
        CHECK_EQ_INT(qtbus_command_execute(j.self, &in, NULL), QTBUS_EINVAL);
        in = tu_event("LoginForm", NULL);
        in.size = 4;
        CHECK_EQ_INT(qtbus_command_execute(j.self, &in, NULL), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_command_execute((qtbus_command){0}, NULL, NULL), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_command_execute((qtbus_command){0xdeadbeef12345ull}, NULL, NULL), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_execution_send((qtbus_execution){0}, "x", 1), QTBUS_ESTALE);
        CHECK_EQ_INT(qtbus_execution_send((qtbus_execution){1}, NULL, 1), QTBUS_EINVAL);
        CHECK_EQ_INT(qtbus_execution_finish((qtbus_execution){0}, 0, NULL), QTBUS_ESTALE);
        CHECK_EQ_INT(atomic_load(&bad.calls), 0);
        CHECK_EQ_INT(atomic_load(&bad.releases), 0);
    }

    /* The bus's destroy disposes its commands: release once, the id stale. */
    int calls = atomic_load(&j.calls);
    CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&j.releases), 1);
    CHECK_EQ_INT(atomic_load(&j.release_while_running), 0);
    CHECK_EQ_INT(qtbus_command_execute(j.self, NULL, NULL), QTBUS_ESTALE);
    CHECK_EQ_INT(atomic_load(&j.calls), calls);
    printf("test_command: passed\n");
    return 0;
}
