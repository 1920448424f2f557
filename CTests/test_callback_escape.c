/* SPDX-License-Identifier: MIT */
/*
 * test_callback_escape: a callback that does not return (a longjmp() out of a handler,
 * as a C++ exception thrown through a C handler would leave it) is outside the
 * contract, but the process must not lose every later release for it.  The library
 * notices it at that thread's next call (or when the thread ends), closes what the
 * callback left open, says so once on stderr and in qtbus_errmsg(), and releases go
 * on.  Calls made from inside handlers are nested, not escapes, and are never "repaired".
 *
 * Users rely on: one misbehaving callback costing what it interrupted, not every
 * release hook in the process for good (qtbus.h: CALLBACKS MUST RETURN).
 */
#include "test_util.h"
#include <pthread.h>
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
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, "InnerSub", NULL, tu_rec_handler, NULL, NULL, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
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
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    CHECK(saved >= 0 && dup2(fd, STDERR_FILENO) >= 0);
    fn();
    fflush(stderr);
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

/* Dispatches `type` `levels` calls deeper than its caller, each frame holding a buffer:
 * the lost dispatch then lies well below the calls this test makes afterwards, the case
 * qtbus.h promises (a call from above the lost frame closes it; one that comes back
 * deeper may be taken for a nested call until then). */
__attribute__((noinline)) static void dispatch_deep(const char *type, int levels)
{
    volatile char frame[256];
    frame[0] = (char)levels;
    if (levels > 0) {
        dispatch_deep(type, levels - 1);
    } else {
        qtbus_event_desc d = tu_event(type, NULL);
        qtbus_dispatch(bus, &d);
    }
    (void)frame[0];
}

/* qtbus_signal_emit of "Typed" with `value`, `levels` calls deeper, as dispatch_deep. */
__attribute__((noinline)) static void emit_deep(int32_t value, int levels)
{
    volatile char frame[256];
    frame[0] = (char)levels;
    if (levels > 0)
        emit_deep(value, levels - 1);
    else
        qtbus_signal_emit(bus, "Typed", NULL, value);
    (void)frame[0];
}

/* Dispatches `type` (whose handler longjmps back here); returns once it escaped. */
static void escape_once(const char *type)
{
    if (setjmp(escape) == 0) {
        dispatch_deep(type, 8);
        CHECK_MSG(0, "the handler returned");
    }
}

/* ---- Releases go on: subscriptions made and disposed on another thread ---- */

enum { CHURN = 28000 };
static atomic_int churn_released;

static void count_release(void *userdata)
{
    (void)userdata;
    atomic_fetch_add(&churn_released, 1);
}

static void nop(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
}

static void *churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < CHURN; i++) {
        qtbus_token t;
        CHECK_EQ_INT(qtbus_subscribe(bus, "Churn", NULL, nop, NULL, count_release, &t), QTBUS_OK);
        CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    }
    return NULL;
}

/* Every release of CHURN subscriptions made and disposed on another thread has run. */
static void check_releases_go_on(const char *after)
{
    atomic_store(&churn_released, 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, churn, NULL) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK_MSG(atomic_load(&churn_released) == CHURN, "after %s: %d of %d releases ran", after,
              atomic_load(&churn_released), CHURN);
}

static char errmsg_after_escape[512];

static void calls_after_escape(void)
{
    CHECK(qtbus_subscriber_count(bus, "Nested", NULL) == 1);
    snprintf(errmsg_after_escape, sizeof errmsg_after_escape, "%s", qtbus_errmsg());
    qtbus_token none = {0};
    CHECK_EQ_INT(qtbus_token_dispose(none), QTBUS_ESTALE);
    dispatch_nested();
}

/* ---- A thread that ends inside a handler (pthread_exit) ---- */

static void exiting_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    pthread_exit(NULL);
}

static void *exit_in_handler(void *arg)
{
    (void)arg;
    qtbus_event_desc d = tu_event("Exit", NULL);
    qtbus_dispatch(bus, &d);
    CHECK_MSG(0, "the handler returned");
    return NULL;
}

static void thread_exits_in_handler(void)
{
    pthread_t th;
    CHECK(pthread_create(&th, NULL, exit_in_handler, NULL) == 0);
    CHECK(pthread_join(th, NULL) == 0);
}

/* ---- Escapes from a nested dispatch: the outer handler goes on ---- */

static jmp_buf inner_escape;

static void outer_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    int *reached_after = userdata;
    if (setjmp(inner_escape) == 0) {
        qtbus_event_desc d = tu_event("InnerEscape", NULL);
        qtbus_dispatch(bus, &d);
        CHECK_MSG(0, "the inner handler returned");
    }
    /* Still inside the outer dispatch: a nested call here is not an escape. */
    qtbus_event_desc d = tu_event("Nested", NULL);
    *reached_after = qtbus_dispatch(bus, &d);
}

static void inner_escaping_handler(const qtbus_event *ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    longjmp(inner_escape, 1);
}

/* ---- A typed signal's handler escapes; a later plain dispatch reaches a typed one ---- */

static int typed_calls;
static int32_t typed_last;

static void typed_escaping(int32_t value, void *userdata)
{
    (void)userdata;
    if (value == 1) longjmp(escape, 1);
    typed_calls++;
    typed_last = value;
}

static const char *errmsg_after_call;

static void one_call(void)
{
    CHECK(qtbus_subscriber_count(bus, "Nested", NULL) == 1);
    errmsg_after_call = qtbus_errmsg();
}

int main(void)
{
    bus = qtbus_bus_create();
    CHECK(bus != NULL);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Nested", NULL, nested_handler, NULL, NULL, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "Escape", NULL, escaping_handler, NULL, NULL, &t), QTBUS_OK);

    /* Calls from inside handlers are nested: nothing is reported or closed. */
    CHECK_EQ_STR(stderr_of(dispatch_nested), "");
    check_releases_go_on("nested calls");

    /* 1. A handler that longjmps out of its dispatch: the next call says so, once. */
    escape_once("Escape");
    const char *text = stderr_of(calls_after_escape);
    const char *first = strstr(text, "qtbus: a callback on this thread did not return normally");
    CHECK_MSG(first != NULL, "stderr after the escape: <%s>", text);
    CHECK_MSG(strstr(text, "CALLBACKS MUST RETURN") != NULL, "stderr after the escape: <%s>", text);
    CHECK_MSG(strstr(first + 1, "qtbus: a callback on this thread") == NULL, "reported more than once: <%s>", text);
    CHECK_MSG(strstr(errmsg_after_escape, "did not return normally") != NULL, "errmsg: <%s>", errmsg_after_escape);
    check_releases_go_on("an escape from a handler");

    /* 2. Escapes in a loop, as a program whose main loop sets the jump does: each is
     * closed at the next call (stderr said it once already), and releases go on. */
    for (int i = 0; i < 100; i++) {
        escape_once("Escape");
        CHECK_EQ_STR(stderr_of(one_call), "");
        CHECK_MSG(strstr(errmsg_after_call, "did not return normally") != NULL, "errmsg: <%s>", errmsg_after_call);
    }
    check_releases_go_on("100 escapes in a loop");

    /* 3. A thread that ends inside a handler: its sections end with it. */
    CHECK_EQ_INT(qtbus_subscribe(bus, "Exit", NULL, exiting_handler, NULL, NULL, &t), QTBUS_OK);
    thread_exits_in_handler();
    check_releases_go_on("a thread that ended inside a handler");

    /* 4. An escape from a nested dispatch back into the outer handler: the outer
     * dispatch goes on (its nested calls work), and as it returns it closes what the
     * inner one left. */
    int reached_after = -1;
    CHECK_EQ_INT(qtbus_subscribe(bus, "Outer", NULL, outer_handler, &reached_after, NULL, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscribe(bus, "InnerEscape", NULL, inner_escaping_handler, NULL, NULL, &t), QTBUS_OK);
    qtbus_event_desc outer = tu_event("Outer", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &outer), 1);
    CHECK_EQ_INT(reached_after, 1);
    CHECK_MSG(strstr(qtbus_errmsg(), "did not return normally") != NULL, "errmsg: <%s>", qtbus_errmsg());
    check_releases_go_on("an escape from a nested dispatch");

    /* 5. A typed handler escapes an emit; later emits and plain dispatches reach typed
     * handlers with the right arguments (nothing reads the lost emit's frame). */
    qtbus_arg kinds[] = {QTBUS_ARG_INT32};
    CHECK_EQ_INT(qtbus_signal_define(bus, "Typed", kinds, 1), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Typed", NULL, QTBUS_CALLBACK(typed_escaping), NULL, NULL, &t), QTBUS_OK);
    if (setjmp(escape) == 0) {
        emit_deep(1, 8);
        CHECK_MSG(0, "the typed handler returned");
    }
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Typed", NULL, (int32_t)7), 1);
    CHECK_EQ_INT(typed_calls, 1);
    CHECK_EQ_INT(typed_last, 7);
    qtbus_value v = {.i32 = 9};
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Typed", NULL, 0, &v, 1), 1);
    CHECK_EQ_INT(typed_calls, 2);
    CHECK_EQ_INT(typed_last, 9);
    check_releases_go_on("an escape from a typed handler");

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_callback_escape: nested calls quiet; escapes (one, a loop of 100, a thread exit, "
           "a nested dispatch, a typed handler) closed and reported once; %d releases ran after each\n",
           CHURN);
    return 0;
}
