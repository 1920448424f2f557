/* SPDX-License-Identifier: MIT */
/*
 * test_release_timing: lifetime rule 1 exactly -- only dispatches delay a release.
 *
 * Users rely on: with no dispatch in progress anywhere, a subscription's release hook
 * running before the disposing call returns, on the disposing thread, whatever other
 * library call is running meanwhile: a command's execute function, a sticky event's
 * object_release inside qtbus_sticky_clear, a shared source's start, or another thread
 * counting subscribers of another bus in a loop.  A release hook that takes a lock held
 * by such a thread would otherwise deadlock there.
 */
#include "test_util.h"

/* ---- one subscription whose release says when and where it ran ---- */

typedef struct probe {
    atomic_int released;  /* the release hook ran */
    atomic_int disposing; /* the disposing call is in progress */
    atomic_int late;      /* ran after the disposing call returned */
    atomic_int foreign;   /* ran on another thread than the disposing one */
    pthread_t disposer;
} probe;

static void probe_release(void *userdata)
{
    probe *p = userdata;
    if (!atomic_load(&p->disposing)) atomic_fetch_add(&p->late, 1);
    if (!pthread_equal(pthread_self(), p->disposer)) atomic_fetch_add(&p->foreign, 1);
    atomic_fetch_add(&p->released, 1);
}

static void nop_handler(const qtbus_event *e, void *u)
{
    (void)e;
    (void)u;
}

static qtbus_token subscribe_probe(qtbus_bus *bus, probe *p)
{
    memset(p, 0, sizeof *p);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Probe", NULL, nop_handler, p, probe_release, &t), QTBUS_OK);
    return t;
}

/* Disposes `t` and checks that its release ran inside the call, on this thread. */
static void dispose_and_check(qtbus_token t, probe *p, const char *where)
{
    p->disposer = pthread_self();
    atomic_store(&p->disposing, 1);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    atomic_store(&p->disposing, 0);
    CHECK_MSG(atomic_load(&p->released) == 1, "%s: the release did not run inside qtbus_token_dispose", where);
    CHECK_EQ_INT(atomic_load(&p->late), 0);
    CHECK_EQ_INT(atomic_load(&p->foreign), 0);
}

static qtbus_bus *bus;
static qtbus_token victim;
static probe victim_probe;

/* ---- inside a command's execute ---- */

static void execute_disposes(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)input;
    (void)userdata;
    dispose_and_check(victim, &victim_probe, "in execute");
    CHECK_EQ_INT(qtbus_execution_finish(execution, 0, NULL), QTBUS_OK);
}

/* ---- inside a sticky event's object_release, during qtbus_sticky_clear ---- */

static void object_release_disposes(void *object)
{
    (void)object;
    dispose_and_check(victim, &victim_probe, "in object_release during sticky_clear");
}

/* ---- inside a shared source's start ---- */

static void start_disposes(qtbus_bus *b, void *userdata)
{
    (void)b;
    (void)userdata;
    dispose_and_check(victim, &victim_probe, "in a source's start");
}

/* ---- another thread counting subscribers of another bus ---- */

static atomic_int stop_counting;
static qtbus_bus *other_bus;

static void count_loop(int index, void *ctx)
{
    (void)index;
    (void)ctx;
    while (!atomic_load(&stop_counting))
        CHECK(qtbus_subscriber_count(other_bus, "Else", NULL) >= 0);
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* A command's execute is not a dispatch. */
    victim = subscribe_probe(bus, &victim_probe);
    qtbus_command command;
    CHECK_EQ_INT(qtbus_command_create(bus, "cmd", 0, execute_disposes, NULL, NULL, &command), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_execute(command, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_dispose(command), QTBUS_OK);

    /* Neither is an object_release run by qtbus_sticky_clear. */
    victim = subscribe_probe(bus, &victim_probe);
    int object = 0;
    qtbus_event_desc sticky = {
        .type = "Kept", .object = &object, .object_release = object_release_disposes, .flags = QTBUS_EVENT_STICKY};
    CHECK_EQ_INT(qtbus_dispatch(bus, &sticky), 0);
    CHECK_EQ_INT(qtbus_sticky_clear(bus, "Kept", NULL), 1);
    CHECK_EQ_INT(atomic_load(&victim_probe.released), 1);

    /* Nor a shared source's start, run inside qtbus_source_connect. */
    victim = subscribe_probe(bus, &victim_probe);
    qtbus_source source;
    CHECK_EQ_INT(qtbus_source_create(bus, "Fed", 0, start_disposes, NULL, NULL, NULL, &source), QTBUS_OK);
    CHECK_EQ_INT(qtbus_source_connect(source), QTBUS_OK);
    CHECK_EQ_INT(qtbus_source_dispose(source), QTBUS_OK);

    /* Nor another thread's qtbus_subscriber_count loop: every release of 200,000 runs
     * inside its dispose, on the disposing thread. */
    other_bus = qtbus_bus_create();
    CHECK(other_bus != NULL);
    tu_threads counter;
    tu_threads_start(&counter, 1, count_loop, NULL);
    int late = 0, foreign = 0;
    for (int i = 0; i < 200000; i++) {
        probe p;
        qtbus_token t = subscribe_probe(bus, &p);
        p.disposer = pthread_self();
        atomic_store(&p.disposing, 1);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
        atomic_store(&p.disposing, 0);
        if (atomic_load(&p.released) != 1) {
            /* Late: wait for it, so `p` outlives its release, and count it. */
            while (atomic_load(&p.released) != 1)
                sched_yield();
        }
        late += atomic_load(&p.late);
        foreign += atomic_load(&p.foreign);
    }
    atomic_store(&stop_counting, 1);
    tu_threads_join(&counter);
    CHECK_EQ_INT(late, 0);
    CHECK_EQ_INT(foreign, 0);

    CHECK_EQ_INT(qtbus_bus_destroy(other_bus), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_release_timing: execute, sticky_clear, source start, 200000 releases beside a counting thread: "
           "0 late, 0 on another thread\n");
    return 0;
}
