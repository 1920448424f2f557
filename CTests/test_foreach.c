/* SPDX-License-Identifier: MIT */
/*
 * qtbus_bus_foreach: every live subscription once, in dispatch order within a type,
 * with its fields; a snapshot (the callback may dispose and subscribe); bad input; and
 * snapshots taken while other threads subscribe and dispose (run under TSan too).
 */
#include "test_util.h"

static void nop(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
}

typedef struct {
    int n;
    qtbus_sub_info info[16];
    char text[16][128]; /* type|subtype,subtype|priority|flags|queued|in_bag */
} seen;

static void record(const qtbus_sub_info *info, void *userdata)
{
    seen *s = userdata;
    CHECK(s->n < 16);
    s->info[s->n] = *info;
    char subtypes[64] = "";
    for (size_t i = 0; i < info->subtype_count; i++) {
        if (i) strcat(subtypes, ",");
        strcat(subtypes, info->subtypes[i]);
    }
    CHECK(info->subtype_count > 0 || info->subtypes == NULL);
    snprintf(s->text[s->n], sizeof s->text[0], "%s|%s|%d|%u|%d|%d", info->type, subtypes, (int)info->priority,
             (unsigned)info->flags, info->queued, info->in_bag);
    s->n++;
}

/* The index in `s` of the entry whose text is `text`, or -1. */
static int find(const seen *s, const char *text)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->text[i], text) == 0) return i;
    return -1;
}

static void dispose_each(const qtbus_sub_info *info, void *userdata)
{
    qtbus_bus *bus = userdata;
    CHECK_EQ_INT(qtbus_token_dispose(info->token), QTBUS_OK);
    /* A subscription made during the walk is not in this snapshot. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Later", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
}

static void count_only(const qtbus_sub_info *info, void *userdata)
{
    (void)info;
    (*(int *)userdata)++;
}

typedef struct {
    qtbus_bus *bus;
    atomic_int stop;
} churn;

static void churn_thread(int index, void *ctx)
{
    churn *c = ctx;
    (void)index;
    const char *subtypes[] = {"a", "b"};
    qtbus_sub_options options = {.subtypes = subtypes, .subtype_count = 2};
    for (unsigned n = 1; !atomic_load(&c->stop); n++) {
        qtbus_token token;
        CHECK_EQ_INT(qtbus_subscribe(c->bus, "Churn", &options, nop, NULL, NULL, &token), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
        /* Under valgrind, which runs one thread at a time, the churning threads took the
         * registry lock back before the snapshotting one got it: up to 200 s. */
        if (n % 16 == 0) sched_yield();
    }
}

static void check_churn(const qtbus_sub_info *info, void *userdata)
{
    (void)userdata;
    CHECK(strcmp(info->type, "Churn") == 0 || strcmp(info->type, "Steady") == 0 || strcmp(info->type, "Later") == 0);
    if (strcmp(info->type, "Churn") == 0) {
        CHECK_EQ_INT((int)info->subtype_count, 2);
        CHECK_EQ_STR(info->subtypes[0], "a");
        CHECK_EQ_STR(info->subtypes[1], "b");
    }
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    seen s = {0};
    CHECK_EQ_INT(qtbus_bus_foreach(bus, record, &s), 0);
    CHECK_EQ_INT(s.n, 0);

    /* Dispatch order within a type: priority, then subscription order. */
    qtbus_queue *queue = qtbus_queue_create("foreach");
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
    const char *a[] = {"a"}, *ab[] = {"a", "b"};
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", &(qtbus_sub_options){.subtypes = a, .subtype_count = 1, .priority = 5}, nop,
                                 NULL, NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "T",
                                 &(qtbus_sub_options){.subtypes = ab, .subtype_count = 2, .flags = QTBUS_SUB_ONCE}, nop,
                                 NULL, NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "U", &(qtbus_sub_options){.queue = queue, .bag = bag, .priority = -3}, nop, NULL,
                                 NULL, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_foreach(bus, record, &s), 4);
    CHECK_EQ_INT(s.n, 4);
    int b = find(&s, "T|a|5|0|0|0"), w = find(&s, "T||0|0|0|0"), o = find(&s, "T|a,b|0|1|0|0");
    CHECK(b >= 0 && w >= 0 && o >= 0);
    CHECK(b < w && w < o); /* one type's entries in dispatch order */
    CHECK(find(&s, "U||-3|0|1|1") >= 0);
    for (int i = 0; i < s.n; i++)
        CHECK_EQ_INT(qtbus_token_is_active(s.info[i].token), 1);

    /* A snapshot: the callback disposes each one and subscribes another type. */
    CHECK_EQ_INT(qtbus_bus_foreach(bus, dispose_each, bus), 4);
    int n = 0;
    CHECK_EQ_INT(qtbus_bus_foreach(bus, count_only, &n), 4); /* the four "Later" */
    CHECK_EQ_INT(n, 4);

    /* Bad input */
    CHECK_EQ_INT(qtbus_bus_foreach(NULL, count_only, &n), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_bus_foreach: the bus is NULL");
    CHECK_EQ_INT(qtbus_bus_foreach(bus, NULL, NULL), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_bus_foreach: fn is NULL");

    /* Snapshots while two threads subscribe and dispose. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Steady", NULL, nop, NULL, NULL, NULL), QTBUS_OK);
    churn c = {.bus = bus};
    tu_threads threads;
    tu_threads_start(&threads, 2, churn_thread, &c);
    for (int i = 0; i < 2000; i++) {
        int got = qtbus_bus_foreach(bus, check_churn, NULL);
        CHECK(got >= 5 && got <= 7); /* the four Later, Steady, and 0 to 2 Churn */
    }
    atomic_store(&c.stop, 1);
    tu_threads_join(&threads);

    CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    qtbus_queue_release(queue);
    printf("test_foreach: ok\n");
    return 0;
}
