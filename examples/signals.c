/* SPDX-License-Identifier: MIT */
/*
 * signals.c -- typed signals in C: declare the arguments once, connect functions that
 * take them, emit with arguments.
 *
 *     cc examples/signals.c $(pkg-config --cflags --libs qtbus) -o signals && ./signals
 *
 * 1. "Download" carries (const char *url, int64_t bytes, double seconds): a typed
 *    handler on the dispatching thread, another on a serial queue (its strings arrive
 *    intact after the emitter reused its buffer), and a plain qtbus_subscribe handler
 *    that reads the same arguments with qtbus_event_args.
 * 2. The status of a misuse: a second, different definition; emitv with the wrong
 *    count.
 * 3. A typed request: "Price" (const char *item, int32_t quantity) answered by a
 *    plain handler with qtbus_event_reply.
 * Exits 0 only if every expected step happened.
 */
#define _POSIX_C_SOURCE 200809L
#include <qtbus.h>

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int failures;

static void check(int ok, const char *what)
{
    printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

static long long total_bytes;
static atomic_int on_queue;
static char last_url_on_queue[64];

static void on_download(const char *url, int64_t bytes, double seconds, void *userdata)
{
    printf("  %s: %s, %lld bytes in %.1f s\n", (const char *)userdata, url, (long long)bytes, seconds);
    total_bytes += bytes;
}

static void on_download_queued(const char *url, int64_t bytes, double seconds, void *userdata)
{
    (void)bytes;
    (void)seconds;
    (void)userdata;
    snprintf(last_url_on_queue, sizeof last_url_on_queue, "%s", url);
    atomic_fetch_add(&on_queue, 1);
}

static void log_any(const qtbus_event *event, void *userdata)
{
    qtbus_value args[QTBUS_SIGNAL_MAX_ARGS];
    int n = qtbus_event_args(event, args, QTBUS_SIGNAL_MAX_ARGS);
    (void)userdata;
    printf("  log: %s with %d arguments, first \"%s\"\n", qtbus_event_type(event), n, n > 0 ? args[0].str : "");
}

static void quote(const qtbus_event *event, void *userdata)
{
    qtbus_value args[2];
    char reply[64];
    (void)userdata;
    if (qtbus_event_args(event, args, 2) != 2) return;
    int size = snprintf(reply, sizeof reply, "%d x %s = %d.00", (int)args[1].i32, args[0].str, 3 * (int)args[1].i32);
    qtbus_event_reply(event, reply, (size_t)size);
}

static char price[64];
static void on_price(const qtbus_event *reply, void *userdata)
{
    size_t size;
    const char *text = qtbus_event_data(reply, &size);
    (void)userdata;
    snprintf(price, sizeof price, "%.*s", (int)size, text);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    if (!bus) return 1;

    printf("1. a typed signal\n");
    static const qtbus_arg download[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT64, QTBUS_ARG_DOUBLE};
    check(qtbus_signal_define(bus, "Download", download, 3) == QTBUS_OK, "Download defined");
    check(qtbus_signal_connect(bus, "Download", NULL, QTBUS_CALLBACK(on_download), "progress", NULL, NULL) == QTBUS_OK,
          "typed handler connected");
    qtbus_queue *queue = qtbus_queue_create("downloads");
    qtbus_sub_options on_the_queue = {.queue = queue};
    check(qtbus_signal_connect(bus, "Download", &on_the_queue, QTBUS_CALLBACK(on_download_queued), NULL, NULL, NULL) ==
              QTBUS_OK,
          "typed handler connected on a queue");
    check(qtbus_subscribe(bus, "Download", NULL, log_any, NULL, NULL, NULL) == QTBUS_OK, "plain logger subscribed");

    char url[64];
    for (int i = 1; i <= 3; i++) {
        snprintf(url, sizeof url, "https://example.org/file%d", i);
        /* The C types of the signature: a literal is cast to int64_t. */
        check(qtbus_signal_emit(bus, "Download", NULL, url, (int64_t)1000 * i, 0.5 * i) == 3, "emitted to 3");
        memset(url, 0, sizeof url);
    }
    check(total_bytes == 6000, "the typed handler saw every argument");
    for (int waited = 0; atomic_load(&on_queue) < 3 && waited < 5000; waited++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    check(atomic_load(&on_queue) == 3 && strcmp(last_url_on_queue, "https://example.org/file3") == 0,
          "the queued handler got its strings after the buffer was reused");

    printf("2. misuse is a status\n");
    static const qtbus_arg other[] = {QTBUS_ARG_STRING};
    check(qtbus_signal_define(bus, "Download", other, 1) == QTBUS_EINVAL, "a different definition: EINVAL");
    qtbus_value one = {.str = "x"};
    check(qtbus_signal_emitv(bus, "Download", NULL, 0, &one, 1) == QTBUS_EINVAL, "wrong count: EINVAL");
    check(qtbus_signal_emit(bus, "Upload", NULL) == QTBUS_EINVAL, "no signature: EINVAL");

    printf("3. a typed request\n");
    static const qtbus_arg item_quantity[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
    check(qtbus_signal_define(bus, "Price", item_quantity, 2) == QTBUS_OK, "Price defined");
    check(qtbus_subscribe(bus, "Price", NULL, quote, NULL, NULL, NULL) == QTBUS_OK, "pricer subscribed");
    qtbus_value ask[2] = {{.str = "apple"}, {.i32 = 4}};
    check(qtbus_signal_requestv(bus, "Price", NULL, ask, 2, on_price, NULL, NULL) == 1, "request reached 1");
    check(strcmp(price, "4 x apple = 12.00") == 0, price);

    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    printf(failures ? "signals: %d FAILED\n" : "signals: all ok\n", failures);
    return failures != 0;
}
