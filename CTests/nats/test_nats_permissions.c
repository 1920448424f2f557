/* SPDX-License-Identifier: MIT */
/*
 * test_nats_permissions.c -- a server that refuses a subscription by its permissions
 * makes the import fail, synchronously, instead of returning QTBUS_OK while the
 * refusal arrives later on nats.c's thread:
 *   - nats-server with a user (a:b in the url) whose subscribe permissions deny
 *     qtbus.*.*.Secret and qtbus.*.*.Hidden: qtbus_nats_import(Secret) and
 *     qtbus_nats_import_subtype(Hidden, x) are QTBUS_EACCES, qtbus_errmsg() giving the
 *     server's words, one MISUSE record (the call's: the asynchronous error the same
 *     refusal also raises is not reported a second time);
 *   - nothing is kept: the same import again asks the server again and is refused
 *     again (a kept import would be "imported twice": QTBUS_OK), promptly; and nothing
 *     is dispatched (with jetstream, the type's event kept by the stream is not
 *     replayed);
 *   - an allowed import on the same connection succeeds promptly and receives;
 *   - the same with options->jetstream (three subscriptions per import);
 *   - once the server's permissions allow it (configuration reloaded), the import that
 *     was refused succeeds on the same connection, although nats.c still holds the old
 *     refusal as the connection's last error (it waits for the refusal that does not
 *     come, up to 2 s, then stands), and receives;
 *   - a refusal that no call waits for (a publish the user may not make) is reported
 *     asynchronously with the server's words, naming the subject;
 *   - each refusal's MISUSE record has the status QTBUS_EACCES (docs/errors.md: a refusal
 *     by the server's permissions is EACCES, not EIO).
 */
#include "nats_server.h"

#include <nats/nats.h>
#include <qtbus_nats.h>

static ns_server server;

static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static int records; /* MISUSE records since seen_reset() */
static char first_function[64], first_errmsg[400];
static int first_status;

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_MISUSE) return;
    pthread_mutex_lock(&seen_lock);
    if (!records++) {
        snprintf(first_function, sizeof first_function, "%s", r->function);
        snprintf(first_errmsg, sizeof first_errmsg, "%s", qtbus_errmsg());
        first_status = r->status;
    }
    pthread_mutex_unlock(&seen_lock);
}

static int seen_records(void)
{
    pthread_mutex_lock(&seen_lock);
    int n = records;
    pthread_mutex_unlock(&seen_lock);
    return n;
}

static void seen_reset(void)
{
    pthread_mutex_lock(&seen_lock);
    records = 0;
    first_function[0] = first_errmsg[0] = '\0';
    first_status = 0;
    pthread_mutex_unlock(&seen_lock);
}

static atomic_int received;
static void receive(const qtbus_event *e, void *userdata)
{
    (void)e;
    (void)userdata;
    atomic_fetch_add(&received, 1);
}

/* `call` refused by the server: QTBUS_EACCES within the round trip, the import's
 * `subject` and the server's words for the first of its subscriptions refused
 * (`refused`), one MISUSE record (checked after a pause, so that a late second one
 * would be seen). */
#define CHECK_REFUSED(call, fn, subject, refused)                                                                      \
    do {                                                                                                               \
        seen_reset();                                                                                                  \
        int64_t start_ = tu_now_ms();                                                                                  \
        int rc_ = (call);                                                                                              \
        int64_t took_ = tu_now_ms() - start_;                                                                          \
        char m_[400];                                                                                                  \
        snprintf(m_, sizeof m_, "%s", qtbus_errmsg());                                                                 \
        printf("%s: %s after %lld ms: %s\n", #call, tu_status_name(rc_), (long long)took_, m_);                        \
        CHECK_EQ_INT(rc_, QTBUS_EACCES);                                                                               \
        CHECK(took_ < 1500);                                                                                           \
        CHECK(strstr(m_, fn ": the server refused the subscription to " subject ": ") == m_);                          \
        CHECK(strstr(m_, "Permissions Violation for Subscription to \"") != NULL);                                     \
        CHECK(strstr(m_, refused) != NULL);                                                                            \
        tu_sleep_ms(300);                                                                                              \
        CHECK_EQ_INT(seen_records(), 1);                                                                               \
        CHECK_EQ_STR(first_function, fn);                                                                              \
        CHECK_EQ_STR(first_errmsg, m_);                                                                                \
        CHECK_EQ_INT(first_status, QTBUS_EACCES);                                                                      \
    } while (0)

/* `type`, exported by `ba` (a's bridge) and imported by b's, crosses from a to b once,
 * with no MISUSE record. */
static void check_crosses(qtbus_bus *a, qtbus_bus *b, qtbus_nats *ba, const char *type)
{
    CHECK_EQ_INT(qtbus_nats_export(ba, type), QTBUS_OK);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_subscribe(b, type, NULL, receive, NULL, NULL, &t), QTBUS_OK);
    atomic_store(&received, 0);
    qtbus_event_desc d = tu_event(type, NULL);
    CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
    CHECK_WAIT(atomic_load(&received) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(seen_records(), 0);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
}

static void refusals(qtbus_bus *a, qtbus_bus *b, const char *url, int jetstream)
{
    printf("-- %s\n", jetstream ? "with options->jetstream" : "core NATS");
    qtbus_nats *ba = NULL, *bb = NULL;
    qtbus_nats_options o = {.url = url, .jetstream = jetstream};
    CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_connect(b, &o, &bb), QTBUS_OK);
    CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);

    /* Core NATS: one subscription to <prefix>.*.*.<type>; with JetStream, events and
     * requests apart (e, q: the first refused is e) beside the stream's. */
    const char *secret = jetstream ? "to \"qtbus.e.*.Secret\"" : "to \"qtbus.*.*.Secret\"";
    const char *hidden = jetstream ? "to \"qtbus.e.x.Hidden\"" : "to \"qtbus.*.x.Hidden\"";
    /* A Secret event kept by the stream (with jetstream): a refused import must not
     * replay it. */
    CHECK_EQ_INT(qtbus_nats_export(ba, "Secret"), QTBUS_OK);
    qtbus_token secret_token;
    CHECK_EQ_INT(qtbus_subscribe(b, "Secret", NULL, receive, NULL, NULL, &secret_token), QTBUS_OK);
    atomic_store(&received, 0);
    qtbus_event_desc kept = {.type = "Secret", .flags = QTBUS_EVENT_STICKY};
    CHECK_EQ_INT(qtbus_dispatch(a, &kept), 1);
    tu_sleep_ms(300);

    CHECK_REFUSED(qtbus_nats_import(bb, "Secret"), "qtbus_nats_import", "qtbus.*.*.Secret", secret);
    CHECK_EQ_INT(atomic_load(&received), 0);
    /* Again: nothing was kept, and the connection's last error, which already reads
     * the same, does not make it pass or wait. */
    CHECK_REFUSED(qtbus_nats_import(bb, "Secret"), "qtbus_nats_import", "qtbus.*.*.Secret", secret);
    CHECK_REFUSED(qtbus_nats_import_subtype(bb, "Hidden", "x"), "qtbus_nats_import_subtype", "qtbus.*.x.Hidden",
                  hidden);
    CHECK_EQ_INT(atomic_load(&received), 0);
    CHECK_EQ_INT(qtbus_token_dispose(secret_token), QTBUS_OK);

    /* Allowed on the same connection: at once, and events cross. */
    seen_reset();
    int64_t start = tu_now_ms();
    CHECK_EQ_INT(qtbus_nats_import(bb, "Open"), QTBUS_OK);
    int64_t took = tu_now_ms() - start;
    printf("an allowed import after the refusals: %lld ms\n", (long long)took);
    CHECK(took < 1500);
    check_crosses(a, b, ba, "Open");

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    CHECK_EQ_INT(seen_records(), 0);
    CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
}

static const char denying[] = "authorization {\n"
                              "  users = [\n"
                              "    { user: a, password: b, permissions: {\n"
                              "        subscribe: { deny: [\"qtbus.*.*.Secret\", \"qtbus.*.*.Hidden\"] },\n"
                              "        publish: { deny: [\"qtbus.e.*.Forbidden\"] } } }\n"
                              "  ]\n"
                              "}\n";
static const char allowing[] =
    "authorization {\n"
    "  users = [\n"
    "    { user: a, password: b, permissions: { publish: { deny: [\"qtbus.e.*.Forbidden\"] } } }\n"
    "  ]\n"
    "}\n";

int main(void)
{
    server.config = denying;
    ns_start(&server);
    char url[96];
    snprintf(url, sizeof url, "nats://a:b@127.0.0.1:%d", server.port);
    qtbus_bus *a = qtbus_bus_create(), *b = qtbus_bus_create();

    refusals(a, b, url, 0);
    refusals(a, b, url, 1);

    /* Refused, then allowed by a reload: the same import on the same connection. */
    {
        qtbus_nats *ba = NULL, *bb = NULL;
        qtbus_nats_options o = {.url = url};
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_connect(b, &o, &bb), QTBUS_OK);
        CHECK_EQ_INT(qtbus_trace_set(b, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_import(bb, "Secret"), QTBUS_EACCES);
        ns_reconfigure(&server, allowing);
        seen_reset();
        int64_t start = tu_now_ms();
        int rc = qtbus_nats_import(bb, "Secret");
        printf("the same import once allowed: %s after %lld ms%s%s\n", tu_status_name(rc),
               (long long)(tu_now_ms() - start), rc ? ": " : "", rc ? qtbus_errmsg() : "");
        CHECK_EQ_INT(rc, QTBUS_OK);
        check_crosses(a, b, ba, "Secret");
        CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
        CHECK_EQ_INT(qtbus_trace_set(b, 0, NULL, NULL, NULL), QTBUS_OK);
    }

    /* A publish the user may not make: no call waits for the server's answer, so it
     * is reported as it comes, on nats.c's thread, with the server's words. */
    {
        qtbus_nats *ba = NULL;
        qtbus_nats_options o = {.url = url};
        CHECK_EQ_INT(qtbus_nats_connect(a, &o, &ba), QTBUS_OK);
        CHECK_EQ_INT(qtbus_trace_set(a, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);
        CHECK_EQ_INT(qtbus_nats_export(ba, "Forbidden"), QTBUS_OK);
        seen_reset();
        qtbus_event_desc d = tu_event("Forbidden", NULL);
        CHECK_EQ_INT(qtbus_dispatch(a, &d), 1);
        CHECK_WAIT(seen_records() == 1, TU_WAIT_MS);
        pthread_mutex_lock(&seen_lock);
        printf("a refused publish: %s\n", first_errmsg);
        CHECK_EQ_STR(first_function, "qtbus_nats");
        CHECK_EQ_INT(first_status, QTBUS_EACCES);
        CHECK(strstr(first_errmsg, "Permissions Violation for Publish to \"qtbus.e._.Forbidden\"") != NULL);
        pthread_mutex_unlock(&seen_lock);
        CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
        CHECK_EQ_INT(qtbus_trace_set(a, 0, NULL, NULL, NULL), QTBUS_OK);
    }

    CHECK_EQ_INT(qtbus_bus_destroy(a), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(b), QTBUS_OK);
    ns_stop(&server);
    printf("test_nats_permissions: passed\n");
    return 0;
}
