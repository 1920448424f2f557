/* SPDX-License-Identifier: MIT */
/*
 * test_nats_subjects: qtbus's pattern matching (QTBUS_SUB_PATTERN) against a real
 * nats-server's, as a differential test.  Random patterns ("*" and ">" among literal
 * tokens, one to four tokens) and random subjects (one to five tokens) from a fixed
 * seed: each pattern is subscribed on the server with nats.c and on a qtbus bus; each
 * subject is published and dispatched; the two sets of (pattern, subject) deliveries
 * must be identical.  Users rely on a qtbus pattern meaning what the same text means to
 * NATS, in process and across the bridge alike.
 */
#include "nats_server.h"
#include <nats/nats.h>

#define NPAT 150
#define NSUBJ 250
static char patterns[NPAT][40], subjects[NSUBJ][40];
static atomic_uchar nats_got[NPAT][NSUBJ];
static unsigned char bus_got[NPAT][NSUBJ];
static atomic_int nats_received;

static int subject_index(const char *data, int size)
{
    char text[16];
    CHECK(size > 0 && size < (int)sizeof text);
    memcpy(text, data, (size_t)size);
    text[size] = 0;
    return atoi(text);
}

static void on_nats(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure)
{
    (void)nc;
    (void)sub;
    int p = (int)(intptr_t)closure;
    int s = subject_index(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    CHECK(s >= 0 && s < NSUBJ);
    atomic_store(&nats_got[p][s], 1);
    atomic_fetch_add(&nats_received, 1);
    natsMsg_Destroy(msg);
}

static void on_bus(const qtbus_event *e, void *userdata)
{
    size_t size = 0;
    const char *data = qtbus_event_data(e, &size);
    int s = subject_index(data, (int)size);
    bus_got[(intptr_t)userdata][s] = 1;
}

static void make(char *out, size_t cap, uint64_t *rng, int pattern)
{
    static const char *const literal[] = {"a", "b", "c"};
    int tokens = 1 + (int)(tu_rand(rng) % (pattern ? 4 : 5));
    out[0] = 0;
    for (int t = 0; t < tokens; t++) {
        const char *token = literal[tu_rand(rng) % 3];
        if (pattern) {
            uint64_t r = tu_rand(rng) % 10;
            if (r < 3)
                token = "*";
            else if (r < 4 && t == tokens - 1)
                token = ">";
        }
        if (t > 0) strncat(out, ".", cap - strlen(out) - 1);
        strncat(out, token, cap - strlen(out) - 1);
    }
}

int main(void)
{
    uint64_t rng = 0x5eed5eedull;
    for (int p = 0; p < NPAT; p++)
        make(patterns[p], sizeof patterns[p], &rng, 1);
    for (int s = 0; s < NSUBJ; s++)
        make(subjects[s], sizeof subjects[s], &rng, 0);

    /* qtbus */
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_sub_options o = tu_options();
    o.flags = QTBUS_SUB_PATTERN;
    for (int p = 0; p < NPAT; p++)
        CHECK_EQ_INT(qtbus_subscribe(bus, patterns[p], &o, on_bus, (void *)(intptr_t)p, NULL, NULL), QTBUS_OK);
    int expected = 0;
    for (int s = 0; s < NSUBJ; s++) {
        char data[16];
        int n = snprintf(data, sizeof data, "%d", s);
        qtbus_event_desc d = tu_event(subjects[s], NULL);
        d.data = data;
        d.size = (size_t)n;
        int reached = qtbus_dispatch(bus, &d);
        CHECK(reached >= 0);
        expected += reached;
    }
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);

    /* nats-server */
    ns_server server;
    memset(&server, 0, sizeof server);
    server.no_jetstream = 1;
    ns_start(&server);
    natsConnection *nc = NULL;
    CHECK_EQ_INT(natsConnection_ConnectTo(&nc, server.url), NATS_OK);
    natsSubscription *subs[NPAT];
    for (int p = 0; p < NPAT; p++)
        CHECK_EQ_INT(natsConnection_Subscribe(&subs[p], nc, patterns[p], on_nats, (void *)(intptr_t)p), NATS_OK);
    CHECK_EQ_INT(natsConnection_Flush(nc), NATS_OK);
    for (int s = 0; s < NSUBJ; s++) {
        char data[16];
        int n = snprintf(data, sizeof data, "%d", s);
        CHECK_EQ_INT(natsConnection_Publish(nc, subjects[s], data, n), NATS_OK);
    }
    CHECK_EQ_INT(natsConnection_Flush(nc), NATS_OK);
    /* The server's deliveries arrive on each subscription's own thread: wait for as many
     * as qtbus made, then a little longer for any it did not. */
    int64_t deadline = tu_now_ms() + TU_WAIT_MS;
    while (atomic_load(&nats_received) < expected && tu_now_ms() < deadline)
        tu_sleep_ms(5);
    tu_sleep_ms(300);

    int pairs = 0, differ = 0;
    for (int p = 0; p < NPAT; p++)
        for (int s = 0; s < NSUBJ; s++) {
            int n = atomic_load(&nats_got[p][s]), b = bus_got[p][s];
            pairs += b;
            if (n != b) {
                if (differ++ < 10)
                    fprintf(stderr, "pattern %s, subject %s: nats-server %s, qtbus %s\n", patterns[p], subjects[s],
                            n ? "delivers" : "does not", b ? "delivers" : "does not");
            }
        }
    printf("%d patterns x %d subjects: %d deliveries, nats-server %d; %d differ\n", NPAT, NSUBJ, pairs,
           atomic_load(&nats_received), differ);
    CHECK_EQ_INT(differ, 0);
    CHECK_EQ_INT(atomic_load(&nats_received), expected);
    CHECK(pairs > 500); /* the data exercises matching, not only misses */
    for (int p = 0; p < NPAT; p++)
        natsSubscription_Destroy(subs[p]);
    natsConnection_Destroy(nc);
    ns_stop(&server);
    printf("test_nats_subjects: passed\n");
    return 0;
}
