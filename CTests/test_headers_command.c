/* SPDX-License-Identifier: MIT */
/*
 * test_headers_command: a command's execution reads its input's headers.
 *
 * Users rely on: the input given to qtbus_command_execute carrying its headers to the
 * execute function, run now on this thread or later on a queue (the input copied).
 */
#include "test_util.h"
#include "test_headers.h"

static th_snap snap;

static void execute(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)userdata;
    th_take(&snap, input);
    qtbus_execution_finish(execution, 0, NULL);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("commands");
    qtbus_command command;
    CHECK_EQ_INT(qtbus_command_create(bus, "Save", QTBUS_COMMAND_CONCURRENT, execute, NULL, NULL, &command), QTBUS_OK);

    qtbus_header h[] = {{"traceparent", TH_TP}, {"x-user", "alice"}};
    qtbus_event_desc d = th_desc("Page", h, 2);
    CHECK_EQ_INT(qtbus_command_execute(command, &d, NULL), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&snap.taken), 1);
    TH_CHECK_EXACT(&snap, {"traceparent", TH_TP}, {"x-user", "alice"});

    char value[] = "bob";
    h[1].value = value;
    CHECK_EQ_INT(qtbus_command_execute(command, &d, queue), QTBUS_OK);
    memcpy(value, "eve", 4); /* the queued execution reads the copy */
    CHECK_WAIT(atomic_load(&snap.taken) == 2, TU_WAIT_MS);
    TH_CHECK_EXACT(&snap, {"traceparent", TH_TP}, {"x-user", "bob"});

    qtbus_command_dispose(command);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    th_snap_clear(&snap);
    printf("test_headers_command: an execution's input carries its headers\n");
    return 0;
}
