/* SPDX-License-Identifier: MIT */
/*
 * test_nats_thread_names.c -- the bridge's threads carry the name "qtbus-nats"
 * (qtbus_nats.h, THREADS), so that top -H and gdb tell them apart:
 *   - no thread of the process has the name before a bridge is connected; one does
 *     while a bridge is, two while two are (read from /proc/self/task/<tid>/comm);
 *   - a handler of an imported event runs on a thread of that name (its own comm);
 *   - qtbus_nats_close() joins it: right after it returns, one fewer; after
 *     qtbus_nats_close_timeout(), whose end runs on a thread of the same name for a
 *     moment, none is left soon after.
 */
#include "nats_server.h"

#include <dirent.h>

#include <qtbus_nats.h>

static ns_server server;

/* The threads of this process named `name` now. */
static int threads_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue; /* a thread that ended meanwhile */
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
        n += strcmp(comm, name) == 0;
    }
    closedir(d);
    return n;
}

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char handler_thread[32];
static atomic_int received;

static void on_event(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
    char comm[32] = "";
    FILE *f = fopen("/proc/thread-self/comm", "r");
    if (f) {
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    pthread_mutex_lock(&seen_lock);
    snprintf(handler_thread, sizeof handler_thread, "%s", comm);
    pthread_mutex_unlock(&seen_lock);
    atomic_fetch_add(&received, 1);
}

int main(void)
{
    ns_start(&server);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();
    CHECK_EQ_INT(threads_named("qtbus-nats"), 0);

    qtbus_nats *ba = ns_bridge(&server, a, 0, 0);
    /* The thread names itself as it starts. */
    CHECK_WAIT(threads_named("qtbus-nats") == 1, TU_WAIT_MS);
    qtbus_nats *bb = ns_bridge(&server, b, 0, 0);
    CHECK_WAIT(threads_named("qtbus-nats") == 2, TU_WAIT_MS);
    printf("two bridges connected: %d threads named qtbus-nats\n", threads_named("qtbus-nats"));

    CHECK_EQ_INT(qtbus_nats_export(ba, "Named"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Named"), QTBUS_OK);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(b, "Named", NULL, on_event, NULL, NULL, &t), QTBUS_OK);
    qtbus_event_desc d = tu_event("Named", NULL);
    CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
    CHECK_WAIT(atomic_load(&received) == 1, TU_WAIT_MS);
    pthread_mutex_lock(&seen_lock);
    printf("an imported event's handler ran on \"%s\"\n", handler_thread);
    CHECK_EQ_STR(handler_thread, "qtbus-nats");
    pthread_mutex_unlock(&seen_lock);

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(threads_named("qtbus-nats"), 1);
    CHECK_EQ_INT(qtbus_nats_close_timeout(bb, 1000), QTBUS_OK);
    CHECK_WAIT(threads_named("qtbus-nats") == 0, TU_WAIT_MS);
    printf("both closed: no thread named qtbus-nats left\n");

    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_thread_names: passed\n");
    return 0;
}
