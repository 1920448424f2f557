/* SPDX-License-Identifier: MIT */
/*
 * qtbus_errmsg(): the function and the precise reason of the last failed call on this
 * thread; per thread; kept across successful calls; and QTBUS_DEBUG=misuse printing it
 * to stderr (checked in a child process started with that environment).
 */
#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

static void nop(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
}

#define CHECK_ERR(call, status, text)                                                                                  \
    do {                                                                                                               \
        CHECK_EQ_INT((call), (status));                                                                                \
        CHECK_EQ_STR(qtbus_errmsg(), (text));                                                                          \
    } while (0)

static void *other_thread(void *arg)
{
    (void)arg;
    CHECK_EQ_STR(qtbus_errmsg(), ""); /* a new thread starts with none */
    CHECK_EQ_INT(qtbus_token_dispose((qtbus_token){12345}), QTBUS_ESTALE);
    CHECK(strstr(qtbus_errmsg(), "qtbus_token_dispose: the token is not live") == qtbus_errmsg());
    return NULL;
}

static void *drain_off_main(void *arg)
{
    (void)arg;
    CHECK_ERR(qtbus_main_drain(), QTBUS_EINVAL,
              "qtbus_main_drain: called on a thread other than the process's main thread");
    return NULL;
}

static int child_misuse(void)
{
    /* Run with QTBUS_DEBUG=misuse: each failed call prints its text on stderr. */
    qtbus_subscribe(NULL, "T", NULL, nop, NULL, NULL, NULL);
    qtbus_bus_destroy(qtbus_shared());
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--misuse-child") == 0) return child_misuse();

    CHECK_EQ_STR(qtbus_errmsg(), "");
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* Arguments */
    CHECK_ERR(qtbus_subscribe(NULL, "T", NULL, nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: the bus is NULL");
    CHECK_ERR(qtbus_subscribe(bus, "T", NULL, NULL, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: the handler is NULL");
    CHECK_ERR(qtbus_subscribe(bus, NULL, NULL, nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: the type name is NULL");
    CHECK_ERR(qtbus_subscribe(bus, "", NULL, nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: the type name \"\" is empty");
    char long_name[300];
    memset(long_name, 'a', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = '\0';
    CHECK_ERR(qtbus_subscribe(bus, long_name, NULL, nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: the type name \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" "
              "is longer than 255 bytes");
    CHECK_ERR(qtbus_subscribe(bus, "Caf\xc3", NULL, nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: the type name \"Caf\\xc3\" is not valid UTF-8");
    const char *subtypes[] = {"ok", "bad\xff"};
    qtbus_sub_options options = {.subtypes = subtypes, .subtype_count = 2};
    CHECK_ERR(qtbus_subscribe(bus, "T", &options, nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: the subtype \"bad\\xff\" is not valid UTF-8");
    options = (qtbus_sub_options){.flags = 0x40 | QTBUS_SUB_ONCE};
    CHECK_ERR(qtbus_subscribe(bus, "T", &options, nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_subscribe: unknown flag bits 0x40 in options->flags");
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", NULL), 0); /* none of those subscribed */

    qtbus_event_desc event = {.type = "T", .size = 3};
    CHECK_ERR(qtbus_dispatch(bus, &event), QTBUS_EINVAL, "qtbus_dispatch: event->data is NULL with a size of 3");
    CHECK_ERR(qtbus_dispatch(bus, NULL), QTBUS_EINVAL, "qtbus_dispatch: the event is NULL");
    event = (qtbus_event_desc){.type = "T", .subtype = "x\x80"};
    CHECK_ERR(qtbus_dispatch(bus, &event), QTBUS_EINVAL, "qtbus_dispatch: the subtype \"x\\x80\" is not valid UTF-8");
    CHECK_ERR(qtbus_dispatch_json(bus, "N", "{"), QTBUS_EJSON,
              "qtbus_dispatch_json: the text is not JSON (RFC 8259, nesting up to QTBUS_JSON_MAX_DEPTH)");
    event = (qtbus_event_desc){.type = "T", .flags = QTBUS_EVENT_STICKY};
    CHECK_ERR(qtbus_request(bus, &event, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_request: a request cannot be sticky (QTBUS_EVENT_STICKY)");

    /* Typed signals; a failure inside the qtbus_subscribe a connect makes names both. */
    qtbus_arg kinds[17] = {QTBUS_ARG_INT32};
    CHECK_ERR(qtbus_signal_define(bus, "S", kinds, 17), QTBUS_EINVAL,
              "qtbus_signal_define: count is 17 (QTBUS_SIGNAL_MAX_ARGS is 16)");
    kinds[0] = (qtbus_arg)9;
    CHECK_ERR(qtbus_signal_define(bus, "S", kinds, 1), QTBUS_EINVAL,
              "qtbus_signal_define: args[0] is not a qtbus_arg kind");
    kinds[0] = QTBUS_ARG_INT32;
    CHECK_EQ_INT(qtbus_signal_define(bus, "S", kinds, 1), QTBUS_OK);
    kinds[0] = QTBUS_ARG_DOUBLE;
    CHECK_ERR(qtbus_signal_define(bus, "S", kinds, 1), QTBUS_EINVAL,
              "qtbus_signal_define: the type has another signature on this bus already");
    CHECK_ERR(qtbus_signal_emit(bus, "Undefined", NULL), QTBUS_EINVAL,
              "qtbus_signal_emit: the type has no signature on this bus (qtbus_signal_define)");
    qtbus_value values[2] = {{.i32 = 1}, {.i32 = 2}};
    CHECK_ERR(qtbus_signal_emitv(bus, "S", NULL, 0, values, 2), QTBUS_EINVAL,
              "qtbus_signal_emitv: count does not match the type's signature (1 arguments)");
    const char *bad[] = {"\xff"};
    options = (qtbus_sub_options){.subtypes = bad, .subtype_count = 1};
    CHECK_ERR(qtbus_signal_connect(bus, "S", &options, (void (*)(void))nop, NULL, NULL, NULL), QTBUS_EINVAL,
              "qtbus_signal_connect: qtbus_subscribe: the subtype \"\\xff\" is not valid UTF-8");

    /* Handles and state */
    qtbus_token token;
    CHECK_EQ_INT(qtbus_subscribe(bus, "T", NULL, nop, NULL, NULL, &token), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(token), QTBUS_OK);
    CHECK_ERR(qtbus_token_dispose(token), QTBUS_ESTALE,
              "qtbus_token_dispose: the token is not live (disposed, its ONCE event delivered, its bus "
              "destroyed, or never made)");
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
    CHECK_ERR(qtbus_bag_dispose(bag), QTBUS_ESTALE, "qtbus_bag_dispose: the bag is disposed or was never made");
    CHECK_ERR(qtbus_bus_destroy(qtbus_shared()), QTBUS_EINVAL,
              "qtbus_bus_destroy: the shared bus (qtbus_shared()) is never destroyed");

    /* Kept across successful calls; per thread. */
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", NULL), 0);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_bus_destroy: the shared bus (qtbus_shared()) is never destroyed");
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, other_thread, NULL) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_bus_destroy: the shared bus (qtbus_shared()) is never destroyed");
    CHECK(pthread_create(&thread, NULL, drain_off_main, NULL) == 0);
    CHECK(pthread_join(thread, NULL) == 0);

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);

    /* QTBUS_DEBUG=misuse: a child process prints one line per failed call. */
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        setenv("QTBUS_DEBUG", "misuse", 1);
        /* argv[0], not /proc/self/exe: under valgrind that is valgrind's own tool. */
        execlp(argv[0], argv[0], "--misuse-child", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[1024] = {0};
    size_t got = 0;
    ssize_t n;
    while (got < sizeof out - 1 && (n = read(fds[0], out + got, sizeof out - 1 - got)) > 0)
        got += (size_t)n;
    close(fds[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ_STR(out, "qtbus: qtbus_subscribe: the bus is NULL\n"
                      "qtbus: qtbus_bus_destroy: the shared bus (qtbus_shared()) is never destroyed\n");
    printf("test_errmsg: ok\n");
    return 0;
}
