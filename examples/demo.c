/* SPDX-License-Identifier: MIT */
/*
 * demo.c -- events flowing through libqtbus, one step at a time.
 *
 *     cc examples/demo.c $(pkg-config --cflags --libs qtbus) -o demo && ./demo
 *
 * Steps: a typed event with data, a subtype filter, a dispose bag disposing two
 * tokens, a JSON event, a serial queue delivering on a background thread, and the
 * main queue drained from a poll() loop.  Every handler counts what it receives;
 * the demo exits 0 only if every expected delivery happened, and no other.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, poll under -std=c11 */
#include <qtbus.h>

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_t main_thread;
static int failures;

static void check(int ok, const char *what)
{
    printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

static void check_status(int status, const char *what)
{
    if (status < 0) printf("  (%s: %s)\n", what, qtbus_strerror(status));
    check(status >= 0, what);
}

/* ---- 1. a typed event: the data is a plain C struct, copied by value ---- */
struct login_event {
    char user[32];
    int attempts;
};
static atomic_int logins;

static void on_login(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const struct login_event *login = qtbus_event_data(event, &size);
    if (size == sizeof *login) printf("  LoginEvent: user=%s attempts=%d\n", login->user, login->attempts);
    atomic_fetch_add(&logins, 1);
}

/* ---- 2. a subtype: only the download of song 42 is of interest ---- */
static atomic_int downloads;

static void on_download(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    printf("  DownloadFinished/%s\n", qtbus_event_subtype(event));
    atomic_fetch_add(&downloads, 1);
}

/* ---- 3. a dispose bag: two subscriptions, one dispose ---- */
static atomic_int logouts;
static atomic_int released; /* release hooks run: one per subscription, exactly once */

static void on_logout(const qtbus_event *event, void *userdata)
{
    (void)event;
    printf("  LogoutEvent reached subscriber %s\n", (const char *)userdata);
    atomic_fetch_add(&logouts, 1);
}

static void release_name(void *userdata)
{
    printf("  released subscriber %s\n", (const char *)userdata);
    atomic_fetch_add(&released, 1);
}

/* ---- 4. a JSON event ---- */
static atomic_int jsons;

static void on_json(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const char *text = qtbus_event_data(event, &size); /* NUL-terminated */
    printf("  QTJsonEvent/%s: %s (%zu bytes)\n", qtbus_event_subtype(event), text, size);
    atomic_fetch_add(&jsons, 1);
}

/* ---- 5. a serial queue: handlers run one at a time, in order, off the main thread ---- */
enum { WORK_ITEMS = 3 };
static atomic_int work_done;
static atomic_int work_off_main;
static atomic_int work_in_order;

static void on_work(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const int *item = qtbus_event_data(event, &size);
    int n = atomic_fetch_add(&work_done, 1);
    if (size == sizeof *item && *item == n) atomic_fetch_add(&work_in_order, 1);
    if (!pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&work_off_main, 1);
    printf("  WorkEvent #%d on the worker queue\n", size == sizeof *item ? *item : -1);

    if (n + 1 == WORK_ITEMS) {
        /* Tell the main thread, through the main queue, that the work is finished. */
        qtbus_event_desc done = {.type = "WorkFinished"};
        qtbus_dispatch_on_main(qtbus_shared(), &done);
    }
}

/* ---- 6. the main queue: runs when the main thread drains it ---- */
static atomic_int ui_updates;
static atomic_int ui_on_main;
static atomic_int work_finished;

static void on_ui(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    const char *subtype = qtbus_event_subtype(event);
    printf("  UiEvent/%s on the main thread\n", subtype ? subtype : "-");
    if (pthread_equal(pthread_self(), main_thread)) atomic_fetch_add(&ui_on_main, 1);
    atomic_fetch_add(&ui_updates, 1);
}

static void on_work_finished(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    printf("  WorkFinished, delivered from the worker via the main queue\n");
    atomic_fetch_add(&work_finished, 1);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
    main_thread = pthread_self();
    qtbus_bus *bus = qtbus_shared();
    printf("libqtbus %s (header %s)\n", qtbus_version(), QTBUS_VERSION_STRING);

    /* One bag holds the demo's subscriptions: disposing it is the whole cleanup. */
    qtbus_bag bag;
    check_status(qtbus_bag_create(&bag), "bag created");

    printf("1. typed event with data\n");
    check_status(QTBUS_SUB(bag, "LoginEvent", on_login, NULL), "subscribed to LoginEvent");
    struct login_event login = {"alice", 1};
    qtbus_event_desc event = {.type = "LoginEvent", .data = &login, .size = sizeof login};
    check(qtbus_dispatch(bus, &event) == 1, "LoginEvent reached 1 subscriber");
    check(atomic_load(&logins) == 1, "on_login ran once, before dispatch returned");

    printf("2. subtype\n");
    const char *song[] = {"song-42"};
    qtbus_sub_options only_42 = {.subtypes = song, .subtype_count = 1, .bag = bag};
    check_status(qtbus_subscribe(bus, "DownloadFinished", &only_42, on_download, NULL, NULL, NULL),
                 "subscribed to DownloadFinished/song-42");
    qtbus_event_desc other = {.type = "DownloadFinished", .subtype = "song-7"};
    qtbus_event_desc mine = {.type = "DownloadFinished", .subtype = "song-42"};
    check(qtbus_dispatch(bus, &other) == 0, "DownloadFinished/song-7 reached nobody");
    check(qtbus_dispatch(bus, &mine) == 1, "DownloadFinished/song-42 reached 1 subscriber");
    check(atomic_load(&downloads) == 1, "on_download ran once");

    printf("3. dispose bag with two tokens\n");
    qtbus_bag logout_bag;
    check_status(qtbus_bag_create(&logout_bag), "second bag created");
    qtbus_sub_options in_logout_bag = {.bag = logout_bag};
    check_status(qtbus_subscribe(bus, "LogoutEvent", &in_logout_bag, on_logout, "A", release_name, NULL),
                 "subscriber A");
    check_status(qtbus_subscribe(bus, "LogoutEvent", &in_logout_bag, on_logout, "B", release_name, NULL),
                 "subscriber B");
    qtbus_event_desc logout = {.type = "LogoutEvent"};
    check(qtbus_dispatch(bus, &logout) == 2, "LogoutEvent reached 2 subscribers");
    check(qtbus_bag_dispose(logout_bag) == QTBUS_OK, "bag disposed");
    check(atomic_load(&released) == 2, "both release hooks ran, once each");
    check(qtbus_dispatch(bus, &logout) == 0, "LogoutEvent now reaches nobody");
    check(atomic_load(&logouts) == 2, "on_logout ran exactly twice in all");
    check(qtbus_bag_dispose(logout_bag) == QTBUS_ESTALE, "disposing the bag again is QTBUS_ESTALE");

    printf("4. JSON event\n");
    check_status(QTBUS_SUB_JSON(bag, "profile", on_json, NULL), "subscribed to JSON \"profile\"");
    check(qtbus_dispatch_json(bus, "profile", "{\"name\": \"alice\", \"age\": 30}") == 1,
          "JSON event reached 1 subscriber");
    check(qtbus_dispatch_json(bus, "profile", "{name: alice}") == QTBUS_EJSON,
          "invalid JSON is QTBUS_EJSON and delivers nothing");
    check(atomic_load(&jsons) == 1, "on_json ran once");

    printf("5. serial queue\n");
    qtbus_queue *worker = qtbus_queue_create("demo.worker");
    check(worker != NULL, "queue created");
    qtbus_sub_options on_worker = {.queue = worker, .bag = bag};
    check_status(qtbus_subscribe(bus, "WorkEvent", &on_worker, on_work, NULL, NULL, NULL),
                 "subscribed to WorkEvent on the queue");
    check_status(QTBUS_SUB(bag, "WorkFinished", on_work_finished, NULL), "subscribed to WorkFinished");
    qtbus_queue_release(worker); /* the subscription keeps the queue alive */
    for (int i = 0; i < WORK_ITEMS; i++) {
        qtbus_event_desc work = {.type = "WorkEvent", .data = &i, .size = sizeof i};
        check(qtbus_dispatch(bus, &work) == 1, "WorkEvent queued");
    }

    printf("6. main queue, drained from poll()\n");
    check_status(QTBUS_SUB_MAIN(bag, "UiEvent", on_ui, NULL), "subscribed to UiEvent on the main queue");
    qtbus_event_desc ui = {.type = "UiEvent", .subtype = "from-dispatch"};
    check(qtbus_dispatch(bus, &ui) == 1, "UiEvent queued for the main thread");
    qtbus_event_desc ui2 = {.type = "UiEvent", .subtype = "from-dispatch_on_main"};
    check_status(qtbus_dispatch_on_main(bus, &ui2), "UiEvent posted with qtbus_dispatch_on_main");
    check(atomic_load(&ui_updates) == 0, "nothing ran on the main queue yet");

    /* A minimal event loop: wait on the fd, drain when readable, stop when everything
     * expected arrived (or after 5 s). */
    struct pollfd fds = {.fd = qtbus_main_fd(), .events = POLLIN};
    double deadline = now_ms() + 5000;
    while ((atomic_load(&ui_updates) < 2 || atomic_load(&work_finished) < 1) && now_ms() < deadline) {
        int ready = poll(&fds, 1, 100);
        if (ready > 0) {
            int ran = qtbus_main_drain();
            printf("  main loop: drained %d item(s)\n", ran);
        }
    }
    check(atomic_load(&ui_updates) == 2, "both UiEvents delivered");
    check(atomic_load(&ui_on_main) == 2, "...on the main thread");
    check(atomic_load(&work_done) == WORK_ITEMS, "every WorkEvent delivered");
    check(atomic_load(&work_in_order) == WORK_ITEMS, "...in FIFO order");
    check(atomic_load(&work_off_main) == WORK_ITEMS, "...off the main thread");
    check(atomic_load(&work_finished) == 1, "WorkFinished reached the main thread");

    printf("cleanup\n");
    check(qtbus_bag_dispose(bag) == QTBUS_OK, "demo bag disposed");
    check(qtbus_subscriber_count(bus, "LoginEvent", NULL) == 0, "no LoginEvent subscriber left");

    if (failures) {
        printf("demo: %d check(s) FAILED\n", failures);
        return 1;
    }
    printf("demo: every expected delivery happened\n");
    return 0;
}
