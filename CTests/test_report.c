/* SPDX-License-Identifier: MIT */
/*
 * test_report.c -- qtbus_report(): a library built on qtbus reports its failures as
 * qtbus does (qtbus_errmsg, the bus's trace hook, qtbus_strerror of its status), and
 * bad arguments to it are refused as its own failure.
 */
#include "test_util.h"

static atomic_int misuse_records;
static char last_function[64];
static int last_status;

static void hook(const qtbus_trace_record *r, void *userdata)
{
    (void)userdata;
    if (r->kind != QTBUS_TRACE_MISUSE) return;
    snprintf(last_function, sizeof last_function, "%s", r->function);
    last_status = r->status;
    atomic_fetch_add(&misuse_records, 1);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    CHECK_EQ_STR(qtbus_strerror(QTBUS_EIO), "connection or I/O failure (a server could not be reached)");
    CHECK_EQ_INT(QTBUS_EIO, -7);
    CHECK_EQ_INT(qtbus_trace_set(bus, QTBUS_TRACE_MISUSE, hook, NULL, NULL), QTBUS_OK);

    /* With a reason; the text is copied (the caller's buffer may go). */
    {
        char why[64];
        snprintf(why, sizeof why, "nats://127.0.0.1:%d refused the connection", 4999);
        CHECK_EQ_INT(qtbus_report(bus, "mylib_connect", QTBUS_EIO, why), QTBUS_EIO);
        memset(why, 'x', sizeof why - 1);
    }
    CHECK_EQ_STR(qtbus_errmsg(), "mylib_connect: nats://127.0.0.1:4999 refused the connection");
    CHECK_EQ_INT(atomic_load(&misuse_records), 1);
    CHECK_EQ_STR(last_function, "mylib_connect");
    CHECK_EQ_INT(last_status, QTBUS_EIO);

    /* Without: the status's own text.  Without a bus: no record. */
    CHECK_EQ_INT(qtbus_report(NULL, "mylib_close", QTBUS_ENOMEM, NULL), QTBUS_ENOMEM);
    CHECK_EQ_STR(qtbus_errmsg(), "mylib_close: out of memory");
    CHECK_EQ_INT(atomic_load(&misuse_records), 1);

    /* Bad arguments: qtbus_report's own failure. */
    CHECK_EQ_INT(qtbus_report(bus, NULL, QTBUS_EIO, "x"), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_report: the function name is NULL");
    CHECK_EQ_INT(qtbus_report(bus, "mylib_open", 0, "x"), QTBUS_EINVAL);
    CHECK_EQ_STR(qtbus_errmsg(), "qtbus_report: the status 0 is not a failure (< 0)");
    CHECK_EQ_INT(atomic_load(&misuse_records), 3);
    CHECK_EQ_STR(last_function, "qtbus_report");

    CHECK_EQ_INT(qtbus_trace_set(bus, 0, NULL, NULL, NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_report: passed\n");
    return 0;
}
