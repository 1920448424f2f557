/* SPDX-License-Identifier: MIT */
/*
 * test_nats_url.c -- options->url lists servers, as many as the operator writes:
 *   - a list of 200 servers whose only reachable one is the last is connected to
 *     (nats.c takes any number; a bridge that read only the first 64 would fail with
 *     "no server could be reached" while the list names one that is up);
 *   - blanks around entries and empty entries are skipped; a list of only those is
 *     QTBUS_EINVAL with one MISUSE record;
 *   - when no server of a long list is up, QTBUS_EIO names the list without a password
 *     written in it (user:password@ in a url is shown as user:***@).
 */
#include "nats_server.h"

#include <qtbus_nats.h>

static ns_server server;

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int seen_misuse;
static char seen_function[64];

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_MISUSE) return;
    pthread_mutex_lock(&seen_lock);
    seen_misuse++;
    snprintf(seen_function, sizeof seen_function, "%s", r->function);
    pthread_mutex_unlock(&seen_lock);
}

static int misuse_count(void)
{
    pthread_mutex_lock(&seen_lock);
    int n = seen_misuse;
    seen_misuse = 0;
    pthread_mutex_unlock(&seen_lock);
    return n;
}

static atomic_int received;
static void receive(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
    atomic_fetch_add(&received, 1);
}

/* `count` urls of servers that are not there (loopback addresses 127.0.1.x, on which
 * nothing listens, so each is refused at once), then `last` when not NULL; `sep` goes
 * between them. */
static char *url_list(int count, const char *user, const char *last, const char *sep)
{
    size_t size = (size_t)count * 64 + 256;
    char *url = malloc(size);
    CHECK(url != NULL);
    size_t n = 0;
    int port = ns_free_port();
    for (int i = 0; i < count; i++) {
        n += (size_t)snprintf(url + n, size - n, "%snats://%s127.0.1.%d:%d", i ? sep : "", user ? user : "",
                              1 + i % 250, port);
    }
    if (last) n += (size_t)snprintf(url + n, size - n, "%s%s", sep, last);
    return url;
}

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    CHECK_EQ_INT(qtbus_trace_set(a, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);

    /* 200 servers, the reachable one last: connected, and events cross through it. */
    {
        char *url = url_list(199, NULL, server.url, ",");
        qtbus_nats *ba = NULL, *bb = NULL;
        qtbus_nats_options o = {.url = url};
        int64_t start = tu_now_ms();
        int rc = qtbus_nats_connect(a, &o, &ba);
        CHECK_MSG(rc == QTBUS_OK, "200 servers, the last one up: %d, %s", rc, qtbus_errmsg());
        printf("200 servers, the 200th up: connected in %lld ms\n", (long long)(tu_now_ms() - start));
        qtbus_nats_options plain = {.url = server.url};
        CHECK_EQ_INT(qtbus_nats_connect(b, &plain, &bb), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Hop"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Hop"), QTBUS_OK);
        CHECK_EQ_INT(qtbus_subscribe(b, "Hop", NULL, receive, NULL, NULL, NULL), QTBUS_OK);
        qtbus_event_desc d = tu_event("Hop", NULL);
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        CHECK_WAIT(atomic_load(&received) == 1, TU_WAIT_MS);
        CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
        CHECK_EQ_INT(misuse_count(), 0);
        free(url);
    }

    /* Blanks and empty entries around a list of 70, the reachable one last. */
    {
        char *url = url_list(69, NULL, server.url, " ,\t, ,");
        qtbus_nats *ba = NULL;
        qtbus_nats_options o = {.url = url};
        int rc = qtbus_nats_connect(a, &o, &ba);
        CHECK_MSG(rc == QTBUS_OK, "blanks: %d, %s", rc, qtbus_errmsg());
        CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
        free(url);
    }

    /* A list of nothing but separators and blanks names no server. */
    {
        qtbus_nats *ba = (qtbus_nats *)&server;
        qtbus_nats_options o = {.url = " , \t ,, "};
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_EINVAL);
        CHECK(ba == NULL);
        printf("no server listed: %s\n", qtbus_errmsg());
        CHECK_EQ_STR(qtbus_errmsg(), "qtbus_nats_connect: options->url lists no server (only commas and blanks)");
        CHECK_EQ_INT(misuse_count(), 1);
    }

    /* None of 100 up, each with a user and a password: QTBUS_EIO, the list named, the
     * password not. */
    {
        char *url = url_list(100, "alice:s3cret@", NULL, ",");
        qtbus_nats *ba = (qtbus_nats *)&server;
        qtbus_nats_options o = {.url = url};
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_EIO);
        CHECK(ba == NULL);
        const char *m = qtbus_errmsg();
        printf("none of 100 up: %s\n", m);
        CHECK(strstr(m, "qtbus_nats_connect: no server at nats://alice:***@127.0.1.1:") == m);
        CHECK(strstr(m, "s3cret") == NULL);
        CHECK_EQ_INT(misuse_count(), 1);
        CHECK_EQ_STR(seen_function, "qtbus_nats_connect");
        free(url);
    }

    CHECK_EQ_INT(qtbus_trace_set(a, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_url: passed\n");
    return 0;
}
