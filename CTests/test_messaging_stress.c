/* SPDX-License-Identifier: MIT */
/*
 * test_messaging_stress: requests, commands and shared sources under threads.
 *
 * Four threads at once:
 *   - send requests answered by a synchronous replier and a replier on a serial queue,
 *     while another thread subscribes and disposes a third replier: every request
 *     completes exactly once, and no reply arrives after its completion;
 *   - execute one non-concurrent command, finishing executions on other threads: its
 *     "executing" events strictly alternate 1, 0, 1, 0 (never two 1s: the FIFO of
 *     command.c), and each accepted execute finishes once;
 *   - subscribe and dispose the type of an autoconnect source: start and stop strictly
 *     alternate, and with no subscriber left the source is stopped.
 * Counts are checked at the end; the sanitizer builds (scripts/sanitize.sh) run this
 * same program.
 */
#include "test_util.h"

#define THREADS 4
static qtbus_bus *bus;
static qtbus_queue *queue;
static int rounds = 3000;

/* ---- requests ---- */
typedef struct req {
    atomic_int replies;
    atomic_int completed;
    atomic_int replies_after_completion;
} req;

static atomic_int total_completions, requests_sent;
static atomic_int total_reply_errors;

static void req_on_reply(const qtbus_event *reply, void *userdata)
{
    (void)reply;
    req *r = (req *)userdata;
    if (atomic_load(&r->completed)) atomic_fetch_add(&r->replies_after_completion, 1);
    atomic_fetch_add(&r->replies, 1);
}

static void req_complete(void *userdata)
{
    req *r = (req *)userdata;
    if (atomic_fetch_add(&r->completed, 1) != 0) atomic_fetch_add(&total_reply_errors, 1);
    if (atomic_load(&r->replies_after_completion)) atomic_fetch_add(&total_reply_errors, 1);
    /* At least the two permanent repliers answered before completion. */
    if (atomic_load(&r->replies) < 2) atomic_fetch_add(&total_reply_errors, 1);
    atomic_fetch_add(&total_completions, 1);
    free(r);
}

static void replier(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    if (qtbus_event_reply(e, "ok", 2) != QTBUS_OK) atomic_fetch_add(&total_reply_errors, 1);
}

/* ---- command ---- */
static qtbus_command command;
static atomic_int executes_ok, executes_busy, finishes_ok;
static atomic_int last_executing = '0';
static atomic_int executing_violations, executing_events;

static void on_executing(const qtbus_event *e, void *userdata)
{
    (void)userdata;
    const char *data = (const char *)qtbus_event_data(e, NULL);
    int prev = atomic_exchange(&last_executing, data[0]);
    if (prev == data[0]) atomic_fetch_add(&executing_violations, 1);
    atomic_fetch_add(&executing_events, 1);
}

#define PENDING_MAX 1024
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static qtbus_execution pending[PENDING_MAX];
static int pending_count;

static void cmd_execute(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)input;
    (void)userdata;
    /* Half finish at once, half are finished by whichever thread takes them. */
    if (execution.id & 1) {
        qtbus_execution_send(execution, "v", 1);
        if (qtbus_execution_finish(execution, 0, NULL) == QTBUS_OK) atomic_fetch_add(&finishes_ok, 1);
        return;
    }
    pthread_mutex_lock(&pending_lock);
    CHECK(pending_count < PENDING_MAX);
    pending[pending_count++] = execution;
    pthread_mutex_unlock(&pending_lock);
}

static void finish_one_pending(void)
{
    pthread_mutex_lock(&pending_lock);
    qtbus_execution e = {0};
    if (pending_count) e = pending[--pending_count];
    pthread_mutex_unlock(&pending_lock);
    if (e.id && qtbus_execution_finish(e, (int)(e.id >> 33) & 1, "failed") == QTBUS_OK)
        atomic_fetch_add(&finishes_ok, 1);
}

/* ---- source ---- */
static qtbus_source source;
static atomic_int src_active, src_overlap, src_starts, src_stops, src_releases;

static void src_start(qtbus_bus *b, void *userdata)
{
    (void)b;
    (void)userdata;
    if (atomic_fetch_add(&src_active, 1) != 0) atomic_fetch_add(&src_overlap, 1);
    atomic_fetch_add(&src_starts, 1);
}

static void src_stop(void *userdata)
{
    (void)userdata;
    if (atomic_fetch_sub(&src_active, 1) != 1) atomic_fetch_add(&src_overlap, 1);
    atomic_fetch_add(&src_stops, 1);
}

static void src_release(void *userdata)
{
    (void)userdata;
    atomic_fetch_add(&src_releases, 1);
}

static void noop(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
}

static void worker(int index, void *ctx)
{
    (void)ctx;
    uint64_t rng = 0x1234567ull * (uint64_t)(index + 1);
    for (int i = 0; i < rounds; i++) {
        switch ((tu_rand(&rng) >> 8) % 4) {
        case 0: {
            req *r = (req *)calloc(1, sizeof *r);
            CHECK(r != NULL);
            qtbus_event_desc d = tu_event("Ask", NULL);
            atomic_fetch_add(&requests_sent, 1);
            int n = qtbus_request(bus, &d, req_on_reply, r, req_complete);
            CHECK(n >= 2);
            break;
        }
        case 1: {
            qtbus_token t;
            CHECK_EQ_INT(qtbus_subscribe(bus, "Ask", NULL, replier, NULL, NULL, &t), QTBUS_OK);
            CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
            break;
        }
        case 2: {
            int rc = qtbus_command_execute(command, NULL, (i & 1) ? queue : NULL);
            if (rc == QTBUS_OK)
                atomic_fetch_add(&executes_ok, 1);
            else if (rc == QTBUS_EBUSY)
                atomic_fetch_add(&executes_busy, 1);
            else
                CHECK_EQ_INT(rc, QTBUS_OK);
            finish_one_pending();
            break;
        }
        case 3: {
            qtbus_token t;
            CHECK_EQ_INT(qtbus_subscribe(bus, "Feed", NULL, noop, NULL, NULL, &t), QTBUS_OK);
            if (tu_rand(&rng) & 1) sched_yield();
            CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
            break;
        }
        }
    }
}

int main(int argc, char **argv)
{
    if (argc > 1) rounds = atoi(argv[1]);
    bus = qtbus_bus_create();
    queue = qtbus_queue_create("stress.queue");
    CHECK(bus && queue);

    qtbus_token sync_replier, queued_replier, exec_observer;
    qtbus_sub_options q = tu_options();
    q.queue = queue;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ask", NULL, replier, NULL, NULL, &sync_replier), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Ask", &q, replier, NULL, NULL, &queued_replier), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_create(bus, "job", 0, cmd_execute, NULL, NULL, &command), QTBUS_OK);
    const char *job = "job";
    qtbus_sub_options jo = tu_options();
    jo.subtypes = &job;
    jo.subtype_count = 1;
    CHECK_EQ_INT(qtbus_subscribe(bus, QTBUS_COMMAND_EXECUTING_TYPE, &jo, on_executing, NULL, NULL, &exec_observer),
                 QTBUS_OK);
    CHECK_EQ_INT(
        qtbus_source_create(bus, "Feed", QTBUS_SOURCE_AUTOCONNECT, src_start, src_stop, NULL, src_release, &source),
        QTBUS_OK);

    tu_run_threads(THREADS, worker, NULL);

    /* Drain: finish what is still pending, let the queue run dry. */
    for (;;) {
        pthread_mutex_lock(&pending_lock);
        int left = pending_count;
        pthread_mutex_unlock(&pending_lock);
        if (left == 0 && atomic_load(&finishes_ok) == atomic_load(&executes_ok)) break;
        finish_one_pending();
        tu_sleep_ms(1);
    }
    CHECK_WAIT(atomic_load(&total_completions) == atomic_load(&requests_sent), TU_WAIT_MS);
    CHECK_WAIT(qtbus_command_is_executing(command) == 0, TU_WAIT_MS);
    CHECK_EQ_INT(qtbus_token_dispose(queued_replier), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(sync_replier), QTBUS_OK);

    printf("requests completed %d, executes %d ok / %d busy, executing events %d, source starts %d stops %d\n",
           atomic_load(&total_completions), atomic_load(&executes_ok), atomic_load(&executes_busy),
           atomic_load(&executing_events), atomic_load(&src_starts), atomic_load(&src_stops));
    CHECK_EQ_INT(atomic_load(&total_reply_errors), 0);
    CHECK(atomic_load(&requests_sent) > 0);
    CHECK_EQ_INT(atomic_load(&finishes_ok), atomic_load(&executes_ok));
    CHECK_EQ_INT(atomic_load(&executing_violations), 0);
    CHECK_EQ_INT(atomic_load(&last_executing), '0');
    CHECK(atomic_load(&executing_events) % 2 == 0);
    CHECK_EQ_INT(atomic_load(&src_overlap), 0);
    CHECK_EQ_INT(atomic_load(&src_active), 0);
    CHECK_EQ_INT(atomic_load(&src_starts), atomic_load(&src_stops));
    CHECK(atomic_load(&src_starts) > 0);

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&src_releases), 1);
    qtbus_queue_release(queue);
    printf("test_messaging_stress: passed\n");
    return 0;
}
