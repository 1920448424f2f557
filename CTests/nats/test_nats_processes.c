/* SPDX-License-Identifier: MIT */
/*
 * test_nats_processes.c -- three processes through one nats-server: this one exports,
 * two others (this program again, as "subscriber") import.  One of them is slow (each
 * handler call sleeps): the publisher's dispatches never wait for it, and it still
 * receives every event, in order, because close flushes and its bridge queues what it
 * received.  A subscriber prints "ready" once imported, then its count and how many
 * arrived out of order.
 */
#include "nats_server.h"

#include <qtbus_nats.h>

enum { EVENTS = 300, SLOW_US = 10000 };

typedef struct sub_state {
    int delay_us;
    atomic_int count;
    atomic_int out_of_order;
    int last;
} sub_state;

static void on_tick(const qtbus_event *e, void *userdata)
{
    sub_state *s = userdata;
    int seq = -1;
    size_t size = 0;
    const void *data = qtbus_event_data(e, &size);
    if (size == sizeof seq) memcpy(&seq, data, sizeof seq);
    if (seq != s->last + 1) atomic_fetch_add(&s->out_of_order, 1);
    s->last = seq;
    if (s->delay_us) {
        struct timespec t = {0, s->delay_us * 1000L};
        nanosleep(&t, NULL);
    }
    atomic_fetch_add(&s->count, 1);
}

/* A subscriber process: argv = url, delay_us. */
static int subscriber(const char *url, int delay_us)
{
    static sub_state s;
    s.delay_us = delay_us;
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_nats *bridge = NULL;
    qtbus_nats_options o = {.url = url};
    CHECK_EQ_INT(qtbus_nats_connect(bus, &o, &bridge), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Tick", NULL, on_tick, &s, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bridge, "Tick"), QTBUS_OK);
    printf("ready\n");
    fflush(stdout);
    CHECK_WAIT(atomic_load(&s.count) == EVENTS, 30000);
    tu_sleep_ms(200); /* nothing more comes */
    printf("%d %d\n", atomic_load(&s.count), atomic_load(&s.out_of_order));
    fflush(stdout);
    CHECK_EQ_INT(qtbus_nats_close(bridge), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    return 0;
}

/* This program, as started (not /proc/self/exe: under valgrind that is the tool). */
static const char *self;

typedef struct child {
    pid_t pid;
    FILE *out;
} child;

static child spawn(const char *url, int delay_us)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    char delay[16];
    snprintf(delay, sizeof delay, "%d", delay_us);
    child c;
    c.pid = fork();
    CHECK(c.pid >= 0);
    if (c.pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        close(fds[1]);
        execl(self, self, "subscriber", url, delay, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    c.out = fdopen(fds[0], "r");
    char line[64];
    CHECK(fgets(line, sizeof line, c.out) != NULL);
    CHECK_EQ_STR(line, "ready\n");
    return c;
}

static void finish(child *c, const char *name)
{
    int count = -1, out_of_order = -1;
    CHECK_EQ_INT(fscanf(c->out, "%d %d", &count, &out_of_order), 2);
    int status = 0;
    CHECK(waitpid(c->pid, &status, 0) == c->pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the %s subscriber failed", name);
    printf("%s subscriber: %d events, %d out of order\n", name, count, out_of_order);
    CHECK_EQ_INT(count, EVENTS);
    CHECK_EQ_INT(out_of_order, 0);
    fclose(c->out);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "subscriber") == 0) return subscriber(argv[2], atoi(argv[3]));
    self = argv[0];

    static ns_server server;
    ns_start(&server);
    child fast = spawn(server.url, 0);
    child slow = spawn(server.url, SLOW_US);

    qtbus_bus *bus = qtbus_bus_create();
    qtbus_nats *bridge = NULL;
    qtbus_nats_options o = {.url = server.url};
    CHECK_EQ_INT(qtbus_nats_connect(bus, &o, &bridge), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_export(bridge, "Tick"), QTBUS_OK);

    /* The slow subscriber needs EVENTS * SLOW_US = 3 s; dispatching must not wait for it. */
    int64_t start = tu_now_ms();
    for (int seq = 1; seq <= EVENTS; seq++) {
        qtbus_event_desc d = {.type = "Tick", .data = &seq, .size = sizeof seq};
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    }
    int64_t took = tu_now_ms() - start;
    printf("publisher: %d dispatches in %lld ms (the slow subscriber needs %d ms)\n", EVENTS, (long long)took,
           EVENTS * SLOW_US / 1000);
    CHECK_MSG(took < EVENTS * SLOW_US / 1000 / 2, "dispatching took %lld ms: it waited for a remote", (long long)took);
    /* Closed at once: the events in flight are flushed, not lost. */
    CHECK_EQ_INT(qtbus_nats_close(bridge), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);

    finish(&fast, "fast");
    finish(&slow, "slow");
    ns_stop(&server);
    printf("test_nats_processes: passed\n");
    return 0;
}
