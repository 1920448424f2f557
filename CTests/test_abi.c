/* SPDX-License-Identifier: MIT */
/*
 * test_abi: the library exports every function the header declares, with the declared
 * type.
 *
 * The engine implements the C entry points with @_cdecl, which nothing checks against
 * the header: a missing symbol would only fail when a user calls it, a mistyped one
 * would corrupt the call.  Taking the address of every function into a pointer of the
 * exact declared type makes a missing symbol a link error and a changed declaration a
 * compile error (-Werror: incompatible pointer types).  scripts/check-exports.sh
 * compares the other way round (nothing exported that is not declared).
 *
 * Also pinned: the handle types are distinct (a bag is not a token), sizes and layouts
 * of the public structs on this platform, the macro values.
 */
#include "test_util.h"

#include <stddef.h>

typedef struct fn_entry {
    const char *name;
    void (*address)(void); /* any function pointer type, for counting and NULL checks */
} fn_entry;

#define FN(name)                                                                                                       \
    {                                                                                                                  \
#name, (void (*)(void))p_##name                                                                                \
    }

int main(void)
{
    /* Status and version */
    const char *(*p_qtbus_strerror)(int) = qtbus_strerror;
    const char *(*p_qtbus_version)(void) = qtbus_version;
    const char *(*p_qtbus_errmsg)(void) = qtbus_errmsg;
    int (*p_qtbus_bus_foreach)(qtbus_bus *, void (*)(const qtbus_sub_info *, void *), void *) = qtbus_bus_foreach;
    int (*p_qtbus_trace_set)(qtbus_bus *, uint32_t, qtbus_trace_fn, void *, qtbus_release) = qtbus_trace_set;
    /* Buses */
    qtbus_bus *(*p_qtbus_shared)(void) = qtbus_shared;
    qtbus_bus *(*p_qtbus_bus_create)(void) = qtbus_bus_create;
    int (*p_qtbus_bus_destroy)(qtbus_bus *) = qtbus_bus_destroy;
    /* Queues */
    qtbus_queue *(*p_qtbus_queue_main)(void) = qtbus_queue_main;
    qtbus_queue *(*p_qtbus_queue_create)(const char *) = qtbus_queue_create;
    void (*p_qtbus_queue_release)(qtbus_queue *) = qtbus_queue_release;
    int (*p_qtbus_main_fd)(void) = qtbus_main_fd;
    int (*p_qtbus_main_drain)(void) = qtbus_main_drain;
    int (*p_qtbus_main_wait)(int) = qtbus_main_wait;
    /* Bags */
    int (*p_qtbus_bag_create)(qtbus_bag *) = qtbus_bag_create;
    int (*p_qtbus_bag_add)(qtbus_bag, qtbus_token) = qtbus_bag_add;
    int (*p_qtbus_bag_dispose)(qtbus_bag) = qtbus_bag_dispose;
    /* Subscribing */
    int (*p_qtbus_subscribe)(qtbus_bus *, const char *, const qtbus_sub_options *, qtbus_handler, void *, qtbus_release,
                             qtbus_token *) = qtbus_subscribe;
    int (*p_qtbus_token_dispose)(qtbus_token) = qtbus_token_dispose;
    int (*p_qtbus_token_is_active)(qtbus_token) = qtbus_token_is_active;
    int (*p_qtbus_token_block)(qtbus_token) = qtbus_token_block;
    int (*p_qtbus_token_unblock)(qtbus_token) = qtbus_token_unblock;
    int (*p_qtbus_subscriber_count)(qtbus_bus *, const char *, const char *) = qtbus_subscriber_count;
    /* Dispatching */
    int (*p_qtbus_dispatch)(qtbus_bus *, const qtbus_event_desc *) = qtbus_dispatch;
    int (*p_qtbus_dispatch_on_bus_queue)(qtbus_bus *, const qtbus_event_desc *) = qtbus_dispatch_on_bus_queue;
    int (*p_qtbus_dispatch_on_main)(qtbus_bus *, const qtbus_event_desc *) = qtbus_dispatch_on_main;
    int (*p_qtbus_dispatch_json)(qtbus_bus *, const char *, const char *) = qtbus_dispatch_json;
    int (*p_qtbus_sticky_clear)(qtbus_bus *, const char *, const char *) = qtbus_sticky_clear;
    /* The event */
    const char *(*p_qtbus_event_type)(const qtbus_event *) = qtbus_event_type;
    const char *(*p_qtbus_event_subtype)(const qtbus_event *) = qtbus_event_subtype;
    const void *(*p_qtbus_event_data)(const qtbus_event *, size_t *) = qtbus_event_data;
    void *(*p_qtbus_event_object)(const qtbus_event *) = qtbus_event_object;
    int (*p_qtbus_event_stop)(const qtbus_event *) = qtbus_event_stop;
    /* Request and reply */
    int (*p_qtbus_request)(qtbus_bus *, const qtbus_event_desc *, qtbus_reply_handler, void *, qtbus_release) =
        qtbus_request;
    int (*p_qtbus_event_reply)(const qtbus_event *, const void *, size_t) = qtbus_event_reply;
    int (*p_qtbus_event_defer)(const qtbus_event *, qtbus_deferred *) = qtbus_event_defer;
    int (*p_qtbus_deferred_reply)(qtbus_deferred, const void *, size_t) = qtbus_deferred_reply;
    int (*p_qtbus_deferred_finish)(qtbus_deferred) = qtbus_deferred_finish;
    uint32_t (*p_qtbus_event_flags)(const qtbus_event *) = qtbus_event_flags;
    int (*p_qtbus_report)(qtbus_bus *, const char *, int, const char *) = qtbus_report;
    int (*p_qtbus_type_lookup)(qtbus_bus *, const char *, qtbus_type_id *) = qtbus_type_lookup;
    int (*p_qtbus_dispatch_id)(qtbus_bus *, qtbus_type_id, const qtbus_event_desc *) = qtbus_dispatch_id;
    /* Commands */
    int (*p_qtbus_command_create)(qtbus_bus *, const char *, uint32_t, qtbus_execute_fn, void *, qtbus_release,
                                  qtbus_command *) = qtbus_command_create;
    int (*p_qtbus_command_execute)(qtbus_command, const qtbus_event_desc *, qtbus_queue *) = qtbus_command_execute;
    int (*p_qtbus_command_set_enabled)(qtbus_command, int) = qtbus_command_set_enabled;
    int (*p_qtbus_command_is_executing)(qtbus_command) = qtbus_command_is_executing;
    int (*p_qtbus_command_is_enabled)(qtbus_command) = qtbus_command_is_enabled;
    int (*p_qtbus_execution_send)(qtbus_execution, const void *, size_t) = qtbus_execution_send;
    int (*p_qtbus_execution_finish)(qtbus_execution, int, const char *) = qtbus_execution_finish;
    int (*p_qtbus_command_dispose)(qtbus_command) = qtbus_command_dispose;
    /* Shared sources */
    int (*p_qtbus_source_create)(qtbus_bus *, const char *, uint32_t, qtbus_source_start, qtbus_source_stop, void *,
                                 qtbus_release, qtbus_source *) = qtbus_source_create;
    int (*p_qtbus_source_connect)(qtbus_source) = qtbus_source_connect;
    int (*p_qtbus_source_disconnect)(qtbus_source) = qtbus_source_disconnect;
    int (*p_qtbus_source_dispose)(qtbus_source) = qtbus_source_dispose;
    /* Typed signals */
    int (*p_qtbus_signal_define)(qtbus_bus *, const char *, const qtbus_arg *, size_t) = qtbus_signal_define;
    int (*p_qtbus_signal_connect)(qtbus_bus *, const char *, const qtbus_sub_options *, void (*)(void), void *,
                                  qtbus_release, qtbus_token *) = qtbus_signal_connect;
    int (*p_qtbus_signal_emit)(qtbus_bus *, const char *, const char *, ...) = qtbus_signal_emit;
    int (*p_qtbus_signal_emitv)(qtbus_bus *, const char *, const char *, uint32_t, const qtbus_value *, size_t) =
        qtbus_signal_emitv;
    int (*p_qtbus_signal_requestv)(qtbus_bus *, const char *, const char *, const qtbus_value *, size_t,
                                   qtbus_reply_handler, void *, qtbus_release) = qtbus_signal_requestv;
    int (*p_qtbus_event_args)(const qtbus_event *, qtbus_value *, size_t) = qtbus_event_args;
    int (*p_qtbus_signal_check)(const void *, size_t, const qtbus_arg *, size_t) = qtbus_signal_check;
    /* Event headers */
    const char *(*p_qtbus_event_header)(const qtbus_event *, const char *) = qtbus_event_header;
    size_t (*p_qtbus_event_header_count)(const qtbus_event *) = qtbus_event_header_count;
    int (*p_qtbus_event_header_at)(const qtbus_event *, size_t, const char **, const char **) = qtbus_event_header_at;

    const fn_entry fns[] = {
        FN(qtbus_strerror),
        FN(qtbus_version),
        FN(qtbus_errmsg),
        FN(qtbus_bus_foreach),
        FN(qtbus_trace_set),
        FN(qtbus_shared),
        FN(qtbus_bus_create),
        FN(qtbus_bus_destroy),
        FN(qtbus_queue_main),
        FN(qtbus_queue_create),
        FN(qtbus_queue_release),
        FN(qtbus_main_fd),
        FN(qtbus_main_drain),
        FN(qtbus_main_wait),
        FN(qtbus_bag_create),
        FN(qtbus_bag_add),
        FN(qtbus_bag_dispose),
        FN(qtbus_subscribe),
        FN(qtbus_token_dispose),
        FN(qtbus_token_is_active),
        FN(qtbus_subscriber_count),
        FN(qtbus_dispatch),
        FN(qtbus_dispatch_on_bus_queue),
        FN(qtbus_dispatch_on_main),
        FN(qtbus_dispatch_json),
        FN(qtbus_sticky_clear),
        FN(qtbus_event_type),
        FN(qtbus_event_subtype),
        FN(qtbus_event_data),
        FN(qtbus_event_object),
        FN(qtbus_event_stop),
        FN(qtbus_request),
        FN(qtbus_event_reply),
        FN(qtbus_command_create),
        FN(qtbus_command_execute),
        FN(qtbus_command_set_enabled),
        FN(qtbus_command_is_executing),
        FN(qtbus_command_is_enabled),
        FN(qtbus_execution_send),
        FN(qtbus_execution_finish),
        FN(qtbus_command_dispose),
        FN(qtbus_source_create),
        FN(qtbus_source_connect),
        FN(qtbus_source_disconnect),
        FN(qtbus_source_dispose),
        FN(qtbus_signal_define),
        FN(qtbus_signal_connect),
        FN(qtbus_signal_emit),
        FN(qtbus_signal_emitv),
        FN(qtbus_signal_requestv),
        FN(qtbus_event_args),
        FN(qtbus_report),
        FN(qtbus_event_flags),
        FN(qtbus_event_defer),
        FN(qtbus_deferred_reply),
        FN(qtbus_deferred_finish),
        FN(qtbus_type_lookup),
        FN(qtbus_dispatch_id),
        FN(qtbus_token_block),
        FN(qtbus_token_unblock),
        FN(qtbus_signal_check),
        FN(qtbus_event_header),
        FN(qtbus_event_header_count),
        FN(qtbus_event_header_at),
    };
    const int count = (int)(sizeof fns / sizeof fns[0]);
    /* 64 QTBUS_API functions of the header (scripts/check-exports.sh checks them all). */
    CHECK_EQ_INT(count, 64);
    for (int i = 0; i < count; i++) {
        CHECK_MSG(fns[i].address != NULL, "%s has no address", fns[i].name);
        for (int j = 0; j < i; j++)
            CHECK_MSG(fns[i].address != fns[j].address, "%s and %s are one function", fns[i].name, fns[j].name);
    }

    /* Call through the pointers. */
    CHECK_EQ_STR(p_qtbus_version(), QTBUS_VERSION_STRING);
    CHECK(p_qtbus_strerror(QTBUS_ESTALE) != NULL);
    CHECK(p_qtbus_shared() == qtbus_shared());

    /* Handles are distinct single-member structs of 64 bits. */
    CHECK_EQ_INT(_Generic((qtbus_bag){0}, qtbus_token : 1, default : 0), 0);
    CHECK_EQ_INT(_Generic((qtbus_token){0}, qtbus_bag : 1, default : 0), 0);
    CHECK_EQ_INT(_Generic((qtbus_command){0}, qtbus_token : 1, qtbus_bag : 1, default : 0), 0);
    CHECK_EQ_INT(_Generic((qtbus_execution){0}, qtbus_command : 1, default : 0), 0);
    CHECK_EQ_INT(_Generic((qtbus_source){0}, qtbus_token : 1, default : 0), 0);
    _Static_assert(sizeof(qtbus_token) == 8, "token is 64 bits");
    _Static_assert(sizeof(qtbus_bag) == 8, "bag is 64 bits");
    _Static_assert(sizeof(qtbus_deferred) == 8, "deferred reply is 64 bits");
    _Static_assert(sizeof(qtbus_type_id) == 8, "type id is 64 bits");
    _Static_assert(sizeof(qtbus_command) == 8, "command is 64 bits");
    _Static_assert(sizeof(qtbus_execution) == 8, "execution is 64 bits");
    _Static_assert(sizeof(qtbus_source) == 8, "source is 64 bits");

    /* Layouts users compile into their programs (LP64). */
#if UINTPTR_MAX == UINT64_MAX
    _Static_assert(offsetof(qtbus_sub_options, subtypes) == 0, "layout");
    _Static_assert(offsetof(qtbus_sub_options, subtype_count) == 8, "layout");
    _Static_assert(offsetof(qtbus_sub_options, queue) == 16, "layout");
    _Static_assert(offsetof(qtbus_sub_options, bag) == 24, "layout");
    _Static_assert(offsetof(qtbus_sub_options, priority) == 32, "layout");
    _Static_assert(offsetof(qtbus_sub_options, flags) == 36, "layout");
    _Static_assert(sizeof(qtbus_sub_options) == 40, "layout");
    _Static_assert(offsetof(qtbus_trace_record, function) == 8, "layout");
    _Static_assert(offsetof(qtbus_trace_record, token) == 32, "layout");
    _Static_assert(offsetof(qtbus_trace_record, status) == 40, "layout");
    _Static_assert(offsetof(qtbus_trace_record, queued) == 48, "layout");
    _Static_assert(offsetof(qtbus_trace_record, duration_ns) == 56, "layout");
    _Static_assert(sizeof(qtbus_trace_record) == 64, "layout");
    _Static_assert(offsetof(qtbus_event_desc, type) == 0, "layout");
    _Static_assert(offsetof(qtbus_event_desc, subtype) == 8, "layout");
    _Static_assert(offsetof(qtbus_event_desc, data) == 16, "layout");
    _Static_assert(offsetof(qtbus_event_desc, size) == 24, "layout");
    _Static_assert(offsetof(qtbus_event_desc, object) == 32, "layout");
    _Static_assert(offsetof(qtbus_event_desc, object_release) == 40, "layout");
    _Static_assert(offsetof(qtbus_event_desc, flags) == 48, "layout");
    /* 0.3.0's fields, after 0.2.0's 56 bytes (read only under QTBUS_EVENT_HEADERS). */
    _Static_assert(offsetof(qtbus_event_desc, headers) == 56, "layout");
    _Static_assert(offsetof(qtbus_event_desc, header_count) == 64, "layout");
    _Static_assert(sizeof(qtbus_event_desc) == 72, "layout");
    _Static_assert(offsetof(qtbus_header, name) == 0, "layout");
    _Static_assert(offsetof(qtbus_header, value) == 8, "layout");
    _Static_assert(sizeof(qtbus_header) == 16, "layout");
#endif
    /* The slots of a signal event's bytes are qtbus_values (qtbus.h, "Typed signals"). */
    _Static_assert(sizeof(qtbus_value) == 8, "layout");
    _Static_assert(sizeof(qtbus_arg) == sizeof(int), "kind enum is an int");
    _Static_assert(sizeof(qtbus_status) == sizeof(int), "status enum is an int");

    /* Macro values are part of the ABI too. */
    CHECK_EQ_INT(QTBUS_SUB_ONCE, 1);
    CHECK_EQ_INT(QTBUS_SUB_REPLAY, 2);
    CHECK_EQ_INT(QTBUS_EVENT_STICKY, 1);
    CHECK_EQ_INT(QTBUS_EVENT_HEADERS, 4);
    CHECK_EQ_STR(QTBUS_JSON_TYPE, "QTJsonEvent");
    CHECK_EQ_STR(QTBUS_NO_SUBSCRIBER_TYPE, "QTNoSubscriberEvent");
    CHECK_EQ_INT(QTBUS_COMMAND_CONCURRENT, 1);
    CHECK_EQ_INT(QTBUS_SOURCE_AUTOCONNECT, 1);
    CHECK_EQ_STR(QTBUS_COMMAND_EXECUTING_TYPE, "QTCommandExecuting");
    CHECK_EQ_STR(QTBUS_COMMAND_VALUE_TYPE, "QTCommandValue");
    CHECK_EQ_STR(QTBUS_COMMAND_ERROR_TYPE, "QTCommandError");
    CHECK_EQ_STR(QTBUS_COMMAND_ENABLED_TYPE, "QTCommandEnabled");
    CHECK_EQ_INT(QTBUS_ARG_INT32, 1);
    CHECK_EQ_INT(QTBUS_ARG_UINT32, 2);
    CHECK_EQ_INT(QTBUS_ARG_INT64, 3);
    CHECK_EQ_INT(QTBUS_ARG_UINT64, 4);
    CHECK_EQ_INT(QTBUS_ARG_DOUBLE, 5);
    CHECK_EQ_INT(QTBUS_ARG_STRING, 6);
    CHECK_EQ_INT(QTBUS_ARG_POINTER, 7);
    CHECK_EQ_INT(QTBUS_SIGNAL_MAX_ARGS, 16);
    CHECK_EQ_INT(QTBUS_MAX_BLOCKS, 65535);
    CHECK_EQ_INT(QTBUS_SIGNAL_LAYOUT_VERSION, 1);

    printf("test_abi: %d functions linked with their declared types\n", count);
    return 0;
}
