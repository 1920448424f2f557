/* SPDX-License-Identifier: MIT */
/*
 * messaging.c -- requests with replies, a command and a shared source, in C.
 *
 *     cc examples/messaging.c $(pkg-config --cflags --libs qtbus) -o messaging && ./messaging
 *
 * 1. Request and reply (SXMessageTransfer): a login screen sends {"account","pwd"};
 *    the auth service (priority 700) answers "login ok" or "bad credentials"; a logger
 *    (default priority) only observes.  Then the auth service moves to a serial queue:
 *    the reply arrives on that queue's thread and the completion after it.
 * 2. A command (RACCommand): executing, values, errors, enabled, as bus events.
 * 3. A shared source (RACMulticastConnection) with autoconnect: one start for two
 *    subscribers, stopped with the last one.
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

/* ---- 1. request and reply ---- */
static void auth_service(const qtbus_event *request, void *userdata)
{
    (void)userdata;
    size_t size;
    const char *json = qtbus_event_data(request, &size);
    char text[128]; /* the bytes are not NUL-terminated in general */
    snprintf(text, sizeof text, "%.*s", (int)size, json);
    const char *answer = strstr(text, "\"pwd\":\"secret\"") ? "login ok" : "bad credentials";
    qtbus_event_reply(request, answer, strlen(answer));
}

static void logger(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    size_t size;
    const char *data = qtbus_event_data(event, &size);
    printf("  logger saw %s %.*s\n", qtbus_event_type(event), (int)size, data);
}

typedef struct login_screen {
    char answer[32];
    atomic_int done;
} login_screen;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    login_screen *screen = userdata;
    size_t size;
    const char *text = qtbus_event_data(reply, &size);
    snprintf(screen->answer, sizeof screen->answer, "%.*s", (int)size, text);
}

static void on_complete(void *userdata)
{
    login_screen *screen = userdata;
    atomic_store(&screen->done, 1);
}

static void login(qtbus_bus *bus, const char *json, login_screen *screen)
{
    memset(screen->answer, 0, sizeof screen->answer);
    atomic_store(&screen->done, 0);
    qtbus_event_desc event = {.type = "Login", .data = json, .size = strlen(json)};
    qtbus_request(bus, &event, on_reply, screen, on_complete);
}

/* ---- 2. a command ---- */
static void refresh(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    if (input) qtbus_event_data(input, &size); /* the page to load */
    if (size == 0) {
        qtbus_execution_finish(execution, 1, "no page given");
        return;
    }
    qtbus_execution_send(execution, "item 1", 6);
    qtbus_execution_send(execution, "item 2", 6);
    qtbus_execution_finish(execution, 0, NULL);
}

static char command_log[256];

static void observe_command(const qtbus_event *event, void *userdata)
{
    size_t size;
    const char *data = qtbus_event_data(event, &size);
    size_t used = strlen(command_log);
    snprintf(command_log + used, sizeof command_log - used, "%s%s=%.*s", used ? " " : "", (const char *)userdata,
             (int)size, data ? data : "");
}

/* ---- 3. a shared source ---- */
static int starts, stops;

static void ticker_start(qtbus_bus *bus, void *userdata)
{
    (void)userdata;
    starts++;
    qtbus_event_desc tick = {.type = "Tick", .data = "1", .size = 1};
    qtbus_dispatch(bus, &tick); /* a real source would start a timer or open a socket */
}

static void ticker_stop(void *userdata)
{
    (void)userdata;
    stops++;
}

static int ticks;
static void on_tick(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    ticks++;
}

static void wait_done(atomic_int *flag)
{
    for (int i = 0; i < 5000 && !atomic_load(flag); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_bag bag;
    qtbus_bag_create(&bag);

    printf("1. request and reply\n");
    qtbus_sub_options auth_options = {.priority = 700, .bag = bag};
    qtbus_token auth;
    qtbus_subscribe(bus, "Login", &auth_options, auth_service, NULL, NULL, &auth);
    qtbus_sub_options log_options = {.bag = bag};
    qtbus_subscribe(bus, "Login", &log_options, logger, NULL, NULL, NULL);

    login_screen screen;
    login(bus, "{\"account\":\"alice\",\"pwd\":\"secret\"}", &screen);
    check(atomic_load(&screen.done) && strcmp(screen.answer, "login ok") == 0,
          "synchronous: \"login ok\", completed before qtbus_request returned");
    login(bus, "{\"account\":\"alice\",\"pwd\":\"guess\"}", &screen);
    check(strcmp(screen.answer, "bad credentials") == 0, "wrong password: \"bad credentials\"");

    qtbus_token_dispose(auth);
    qtbus_queue *auth_queue = qtbus_queue_create("auth");
    auth_options.queue = auth_queue;
    qtbus_subscribe(bus, "Login", &auth_options, auth_service, NULL, NULL, NULL);
    login(bus, "{\"account\":\"alice\",\"pwd\":\"secret\"}", &screen);
    wait_done(&screen.done);
    check(atomic_load(&screen.done) && strcmp(screen.answer, "login ok") == 0,
          "auth service on a serial queue: replied there, completed after it");

    printf("2. a command\n");
    const char *name = "refresh";
    static const char *const types[] = {QTBUS_COMMAND_EXECUTING_TYPE, QTBUS_COMMAND_VALUE_TYPE,
                                        QTBUS_COMMAND_ERROR_TYPE};
    static const char *const tags[] = {"executing", "value", "error"};
    for (int i = 0; i < 3; i++) {
        qtbus_sub_options o = {.subtypes = &name, .subtype_count = 1, .bag = bag};
        qtbus_subscribe(bus, types[i], &o, observe_command, (void *)tags[i], NULL, NULL);
    }
    qtbus_command command;
    qtbus_command_create(bus, name, 0, refresh, NULL, NULL, &command);
    qtbus_event_desc page = {.type = "Page", .data = "news", .size = 4};
    qtbus_command_execute(command, &page, NULL);
    printf("  %s\n", command_log);
    check(strcmp(command_log, "executing=1 value=item 1 value=item 2 executing=0") == 0,
          "executing 1, two values, executing 0");
    command_log[0] = 0;
    qtbus_command_execute(command, NULL, NULL);
    check(strcmp(command_log, "executing=1 error=no page given executing=0") == 0,
          "a failure: the error with its message, before executing 0");
    qtbus_command_set_enabled(command, 0);
    check(qtbus_command_execute(command, &page, NULL) == QTBUS_EBUSY, "disabled: QTBUS_EBUSY, nothing run");
    qtbus_command_dispose(command);

    printf("3. a shared source\n");
    qtbus_source ticker;
    qtbus_source_create(bus, "Tick", QTBUS_SOURCE_AUTOCONNECT, ticker_start, ticker_stop, NULL, NULL, &ticker);
    qtbus_token first, second;
    qtbus_subscribe(bus, "Tick", NULL, on_tick, NULL, NULL, &first);  /* starts the source */
    qtbus_subscribe(bus, "Tick", NULL, on_tick, NULL, NULL, &second); /* shares it */
    check(starts == 1 && ticks == 1, "two subscribers, one start");
    qtbus_token_dispose(first);
    qtbus_token_dispose(second); /* the last one: stops it */
    check(stops == 1, "stopped with the last subscriber");
    qtbus_source_dispose(ticker);

    qtbus_bag_dispose(bag);
    qtbus_queue_release(auth_queue);
    qtbus_bus_destroy(bus);
    printf(failures ? "messaging: %d step(s) failed\n" : "messaging: every step happened\n", failures);
    return failures ? 1 : 0;
}
