/* SPDX-License-Identifier: MIT */
/*
 * header_check.c: qtbus.h compiles cleanly as strict C99 and C11
 * (-std=c99 / -std=c11 -Wall -Wextra -pedantic -Werror), alone, and is usable:
 * the convenience macros, the handle types, a zero-filled options struct, and
 * QTBUS_CALLBACK with a typed signal.
 * Built twice by CMakeLists.txt (header_c99, header_c11) and run as a test.
 */
#include <qtbus.h>
#include <qtbus.h> /* the include guard holds */

#include <stdio.h>
#include <string.h>

static int calls;

static void on_event(const qtbus_event *event, void *userdata)
{
    (void)event;
    *(int *)userdata += 1;
}

static void on_signal(const char *text, int32_t number, void *userdata)
{
    *(int *)userdata += text[0] == 'c' && number == 99;
}

int main(void)
{
    static const qtbus_arg args[2] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
    qtbus_value values[2];
    int typed = 0;
    qtbus_bag bag = {0};
    qtbus_token token = {0};
    qtbus_sub_options options = {0};
    qtbus_event_desc desc;
    qtbus_status status = QTBUS_OK;
    int rc;

    (void)options;
    if (strcmp(qtbus_version(), QTBUS_VERSION_STRING) != 0) {
        fprintf(stderr, "version mismatch: %s vs %s\n", qtbus_version(), QTBUS_VERSION_STRING);
        return 1;
    }
    if (qtbus_bag_create(&bag) != QTBUS_OK) return 1;
    rc = QTBUS_SUB(bag, "HeaderCheckC", on_event, &calls);
    if (rc != (int)status) return 1;
    memset(&desc, 0, sizeof desc);
    desc.type = "HeaderCheckC";
    if (qtbus_dispatch(qtbus_shared(), &desc) != 1 || calls != 1) return 1;
    if (qtbus_bag_dispose(bag) != QTBUS_OK) return 1;
    if (qtbus_dispatch(qtbus_shared(), &desc) != 0 || calls != 1) return 1;
    if (qtbus_signal_define(qtbus_shared(), "HeaderCheckSignalC", args, 2) != QTBUS_OK) return 1;
    if (qtbus_signal_connect(qtbus_shared(), "HeaderCheckSignalC", NULL, QTBUS_CALLBACK(on_signal), &typed, NULL,
                             &token) != QTBUS_OK)
        return 1;
    values[0].str = "c";
    values[1].i32 = 99;
    if (qtbus_signal_emitv(qtbus_shared(), "HeaderCheckSignalC", NULL, 0, values, 2) != 1 || typed != 1) return 1;
    if (qtbus_signal_emit(qtbus_shared(), "HeaderCheckSignalC", NULL, "c", (int32_t)99) != 1 || typed != 2) return 1;
    if (qtbus_token_dispose(token) != QTBUS_OK) return 1;
    printf("header check (C, __STDC_VERSION__ %ld): ok\n", (long)__STDC_VERSION__);
    return 0;
}
