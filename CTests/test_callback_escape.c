/*
 * test_callback_escape: with QTBUS_DEBUG=1, a callback that does not return (here a
 * longjmp() out of a handler, as a C++ exception would leave it) is reported on stderr
 * at this thread's next call, once; calls made from inside handlers are not.
 *
 * Users rely on: being told what happened instead of finding, much later, that no
 * release hook runs any more (qtbus.h: CALLBACKS MUST RETURN).  The test runs itself
 * again with QTBUS_DEBUG=1 set (the library reads it when it is loaded).
 */
#include "test_util.h"
#include <setjmp.h>
#include <unistd.h>

static jmp_buf escape;
static qtbus_bus *bus;

static void nested_handler(const qtbus_event *ev, void *userdata)
{
    (void)userdata;
    /* Calls from inside a handler: nested, not an escape. */
    CHECK(qtbus_subscriber_count(bus, qtbus_event_type(ev), NULL) >= 1);
    qtbus_event_desc inner = tu_event("Inner", NULL);
    CHECK(qtbus_dispatch(bus, &inner) >= 0);
    qtbus_token none = {0};
    CHECK_EQ_INT(qtbus_token_dispose(none), QTBUS_ESTALE);
}

static void escaping_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    longjmp(escape, 1);
}

/* Runs `fn` with stderr going to a file, and returns what it wrote. */
static const char *stderr_of(void (*fn)(void))
{
    char path[] = "/tmp/qtbus-escape-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    int saved = dup(STDERR_FILENO);
    CHECK(saved >= 0 && dup2(fd, STDERR_FILENO) >= 0);
    fn();
    CHECK(dup2(saved, STDERR_FILENO) >= 0);
    close(saved);
    static char text[4096];
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    CHECK(n >= 0);
    text[n] = '\0';
    close(fd);
    unlink(path);
    return text;
}

static void dispatch_nested(void)
{
    qtbus_event_desc d = tu_event("Nested", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
}

static void calls_after_escape(void)
{
    CHECK(qtbus_subscriber_count(bus, "Nested", NULL) == 1);
    qtbus_token none = {0};
    CHECK_EQ_INT(qtbus_token_dispose(none), QTBUS_ESTALE);
    dispatch_nested();
}

int main(int argc, char **argv)
{
    (void)argc;
    if (!getenv("QTBUS_DEBUG")) {
        CHECK(setenv("QTBUS_DEBUG", "1", 1) == 0);
        execv(argv[0], argv); /* argv[0]: under valgrind, /proc/self/exe is valgrind */
        CHECK_MSG(0, "cannot run itself again with QTBUS_DEBUG=1");
    }
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Nested", NULL, nested_handler, NULL, NULL, &t), QTBUS_OK);

    /* Calls from inside handlers are nested: nothing is reported. */
    CHECK_EQ_STR(stderr_of(dispatch_nested), "");

    /* A handler that longjmps out of its dispatch: the next calls say so, once. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Escape", NULL, escaping_handler, NULL, NULL, &t), QTBUS_OK);
    if (setjmp(escape) == 0) {
        qtbus_event_desc d = tu_event("Escape", NULL);
        qtbus_dispatch(bus, &d);
        CHECK_MSG(0, "the handler returned");
    }
    const char *text = stderr_of(calls_after_escape);
    const char *first = strstr(text, "qtbus: a callback on this thread did not return normally");
    CHECK_MSG(first != NULL, "stderr after the escape: <%s>", text);
    CHECK_MSG(strstr(text, "CALLBACKS MUST RETURN") != NULL, "stderr after the escape: <%s>", text);
    CHECK_MSG(strstr(first + 1, "qtbus: a callback on this thread") == NULL, "reported more than once: <%s>", text);
    printf("test_callback_escape: nested calls quiet, an escape reported once\n");
    return 0;
}
