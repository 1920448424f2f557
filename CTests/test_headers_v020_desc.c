/* SPDX-License-Identifier: MIT */
/*
 * test_headers_v020_desc: a program built against 0.2.0's header keeps working: without
 * QTBUS_EVENT_HEADERS the library never reads past 0.2.0's qtbus_event_desc.
 *
 * Such a program's descs are 0.2.0's size.  Each desc here is exactly that size and
 * ends where a page ends, the next page unreadable (PROT_NONE): a read of the fields
 * 0.3.0 added, or a copy of the whole new struct, faults and fails the test.  Every call
 * that takes a desc is made with one: the dispatches (by name, by id, posted on the bus
 * queue and the main queue, sticky, with queued deliveries that copy the event),
 * qtbus_request, qtbus_command_execute (now and queued).  Also: a new-size desc without
 * the flag whose headers field is garbage is not read (the event has no headers).
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "test_util.h"

#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

/* qtbus_event_desc as 0.2.0's header declares it. */
typedef struct desc_v020 {
    const char *type;
    const char *subtype;
    const void *data;
    size_t size;
    void *object;
    qtbus_release object_release;
    uint32_t flags;
} desc_v020;

_Static_assert(offsetof(desc_v020, flags) == offsetof(qtbus_event_desc, flags), "0.2.0's fields lead 0.3.0's");
_Static_assert(sizeof(desc_v020) <= offsetof(qtbus_event_desc, headers), "0.3.0's fields follow 0.2.0's");

static unsigned char *page;
static long page_size;

/* A 0.2.0 desc at the very end of the readable page. */
static const qtbus_event_desc *guarded(const desc_v020 *d)
{
    unsigned char *at = page + page_size - sizeof *d;
    memcpy(at, d, sizeof *d);
    return (const qtbus_event_desc *)(const void *)at;
}

static atomic_int executions, completions;
static void execute(const qtbus_event *input, qtbus_execution execution, void *userdata)
{
    (void)input;
    (void)userdata;
    atomic_fetch_add(&executions, 1);
    qtbus_execution_finish(execution, 0, NULL);
}
static void completed(void *userdata)
{
    (void)userdata;
    atomic_fetch_add(&completions, 1);
}

int main(void)
{
    page_size = sysconf(_SC_PAGESIZE);
    page = mmap(NULL, (size_t)page_size * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    CHECK_EQ_INT(mprotect(page + page_size, (size_t)page_size, PROT_NONE), 0);

    qtbus_bus *bus = qtbus_bus_create();
    qtbus_queue *queue = qtbus_queue_create("v020");
    tu_rec sync_rec, queued_rec;
    tu_rec_init(&sync_rec);
    tu_rec_init(&queued_rec);
    qtbus_sub_options o = tu_options();
    o.queue = queue;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", NULL, &sync_rec, NULL), QTBUS_OK);
    CHECK_EQ_INT(tu_sub_rec(bus, "T", &o, &queued_rec, NULL), QTBUS_OK);
    qtbus_type_id id;
    CHECK_EQ_INT(qtbus_type_lookup(bus, "T", &id), QTBUS_OK);
    qtbus_command command;
    CHECK_EQ_INT(qtbus_command_create(bus, "cmd", QTBUS_COMMAND_CONCURRENT, execute, NULL, NULL, &command), QTBUS_OK);

    atomic_int released = 0;
    desc_v020 d = {
        .type = "T", .subtype = "s", .data = "abc", .size = 3, .object = &released, .object_release = tu_count_release};
    CHECK_EQ_INT(qtbus_dispatch(bus, guarded(&d)), 2);
    CHECK_EQ_INT(qtbus_dispatch_id(bus, id, guarded(&d)), 2);
    CHECK_EQ_INT(qtbus_dispatch_on_bus_queue(bus, guarded(&d)), QTBUS_OK);
    CHECK_EQ_INT(qtbus_dispatch_on_main(bus, guarded(&d)), QTBUS_OK);
    CHECK_EQ_INT(qtbus_request(bus, guarded(&d), NULL, NULL, completed), 2);
    d.flags = QTBUS_EVENT_STICKY;
    CHECK_EQ_INT(qtbus_dispatch(bus, guarded(&d)), 2);
    d.flags = 0;
    d.type = "Input";
    CHECK_EQ_INT(qtbus_command_execute(command, guarded(&d), NULL), QTBUS_OK);
    CHECK_EQ_INT(qtbus_command_execute(command, guarded(&d), queue), QTBUS_OK);
    /* Refusals read no further either. */
    d.type = "";
    CHECK_EQ_INT(qtbus_dispatch(bus, guarded(&d)), QTBUS_EINVAL);
    d.type = "T";
    d.flags = 1u << 30;
    CHECK_EQ_INT(qtbus_dispatch(bus, guarded(&d)), QTBUS_EINVAL);
    CHECK_IDLE(bus);
    CHECK_WAIT(atomic_load(&executions) == 2, TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&sync_rec.calls), 6);
    CHECK_EQ_INT(atomic_load(&queued_rec.calls), 6);
    CHECK_EQ_INT(atomic_load(&completions), 1);

    /* The new-size desc without the flag: its headers field is not read. */
    qtbus_event_desc full = tu_event("T", NULL);
    full.headers = (const qtbus_header *)(uintptr_t)1; /* would fault if read */
    full.header_count = 5;
    CHECK_EQ_INT(qtbus_dispatch(bus, &full), 2);
    CHECK_IDLE(bus);

    qtbus_command_dispose(command);
    qtbus_bus_destroy(bus);
    qtbus_queue_release(queue);
    CHECK_EQ_INT(atomic_load(&released), 8); /* six dispatches, two executions */
    munmap(page, (size_t)page_size * 2);
    printf("test_headers_v020_desc: 0.2.0-sized descs at a page's end, never read past\n");
    return 0;
}
