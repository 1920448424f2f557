/*
 * header_check.c: qtbus.h compiles cleanly as strict C99 and C11
 * (-std=c99 / -std=c11 -Wall -Wextra -pedantic -Werror), alone, and is usable:
 * the convenience macros, the handle types and a zero-filled options struct.
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

int main(void)
{
    qtbus_bag bag = {0};
    qtbus_token token = {0};
    qtbus_sub_options options = {0};
    qtbus_event_desc desc;
    qtbus_status status = QTBUS_OK;
    int rc;

    (void)options;
    (void)token;
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
    printf("header check (C, __STDC_VERSION__ %ld): ok\n", (long)__STDC_VERSION__);
    return 0;
}
