/* SPDX-License-Identifier: MIT */
/*
 * test_headers_refusals: every call that takes a desc refuses headers that break the
 * rules the same way, in its own name.
 *
 * Users rely on: qtbus_dispatch, _id, _on_bus_queue, _on_main, qtbus_request and
 * qtbus_command_execute each returning QTBUS_EINVAL for a bad header, with
 * qtbus_errmsg() naming that call and the reason; nothing delivered (queued deliveries
 * and posted dispatches included), the event's object not taken, a request's
 * completion not run, a command's execution not started; and the same desc with a good
 * header accepted by each.
 */
#include "test_util.h"
#include "test_headers.h"

static atomic_int released, completions, executions;
static tu_rec rec;

static void count_completion(void *userdata)
{
    (void)userdata;
    atomic_fetch_add(&completions, 1);
}

static void execute(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)input;
    (void)userdata;
    atomic_fetch_add(&executions, 1);
    qtbus_execution_finish(execution, 0, NULL);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("headers");
    tu_rec_init(&rec);
    qtbus_sub_options queued = tu_options();
    queued.queue = queue;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", NULL, &rec, NULL), QTBUS_OK);
    CHECK_EQ_INT(tu_sub_rec(bus, "T", &queued, &rec, NULL), QTBUS_OK);
    qtbus_type_id id;
    CHECK_EQ_INT(qtbus_type_lookup(bus, "T", &id), QTBUS_OK);
    qtbus_command command;
    CHECK_EQ_INT(qtbus_command_create(bus, "cmd", 0, execute, NULL, NULL, &command), QTBUS_OK);

    const qtbus_header bad[][1] = {
        {{"bad name", "v"}},
        {{"v", "a\nb"}},
        {{"Qtbus-Origin", "v"}},
        {{NULL, "v"}},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        qtbus_event_desc d = th_desc("T", bad[b], 1);
        d.object = &released;
        d.object_release = tu_count_release;
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), QTBUS_EINVAL);
        TH_CHECK_ERRMSG("qtbus_dispatch");
        CHECK_EQ_INT(qtbus_dispatch_id(bus, id, &d), QTBUS_EINVAL);
        TH_CHECK_ERRMSG("qtbus_dispatch_id");
        CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_EINVAL);
        TH_CHECK_ERRMSG("qtbus_dispatch_on_bus_queue");
        CHECK_EQ_INT(qtbus_dispatch_on_main(bus, &d), QTBUS_EINVAL);
        TH_CHECK_ERRMSG("qtbus_dispatch_on_main");
        CHECK_EQ_INT(qtbus_request(bus, &d, NULL, NULL, count_completion), QTBUS_EINVAL);
        TH_CHECK_ERRMSG("qtbus_request");
        CHECK_EQ_INT(qtbus_command_execute(command, &d, NULL), QTBUS_EINVAL);
        TH_CHECK_ERRMSG("qtbus_command_execute");
    }
    CHECK_IDLE(bus); /* on the main thread: runs the main queue's work too */
    CHECK_EQ_INT(atomic_load(&rec.calls), 0);
    CHECK_EQ_INT(atomic_load(&released), 0);
    CHECK_EQ_INT(atomic_load(&completions), 0);
    CHECK_EQ_INT(atomic_load(&executions), 0);

    /* The same calls with a good header: each accepted. */
    const qtbus_header good[] = {{"traceparent", TH_TP}};
    qtbus_event_desc d = th_desc("T", good, 1);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, id, &d), 2);
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, &d), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch_on_main(bus, &d), QTBUS_OK);
    CHECK_EQ_INT(qtbus_request(bus, &d, NULL, NULL, count_completion), 2);
    CHECK_EQ_INT(qtbus_command_execute(command, &d, NULL), QTBUS_OK);
    CHECK_IDLE(bus);
    CHECK_EQ_INT(atomic_load(&rec.calls), 10);
    CHECK_EQ_INT(atomic_load(&completions), 1);
    CHECK_EQ_INT(atomic_load(&executions), 1);

    qtbus_command_dispose(command);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    /* Two subscriptions share rec: each released once, none called after. */
    CHECK_EQ_INT(atomic_load(&rec.calls_after_release), 0);
    CHECK_EQ_INT(atomic_load(&rec.release_while_running), 0);
    CHECK_EQ_INT(atomic_load(&rec.releases), 2);
    printf("test_headers_refusals: six calls refuse bad headers in their own names\n");
    return 0;
}
