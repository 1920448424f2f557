/* SPDX-License-Identifier: MIT */
/* See include/cpeer.h.  A fixed table of slots guarded by a mutex: the handler may run
 * on any thread. */
#include "cpeer.h"
#include <qtbus.h>
#include <malloc.h>
#include <pthread.h>
#include <string.h>

#define SLOTS 32
#define TEXT 1024

struct slot {
    int used;
    qtbus_token token;
    int count;
    char type[256];
    char subtype[256];
    char data[TEXT];
    size_t size;
    int terminated;
    int had_object;
    char history[TEXT]; /* every event's data, each followed by '|' (truncated when full) */
    char reply[256];    /* a replier's answer (cpeer_replier), empty for a listener */
};

static struct slot slots[SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

static void on_event(const qtbus_event *event, void *userdata)
{
    struct slot *s = userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(event, &size);
    pthread_mutex_lock(&lock);
    s->count++;
    copy_text(s->type, sizeof s->type, qtbus_event_type(event));
    copy_text(s->subtype, sizeof s->subtype, qtbus_event_subtype(event));
    s->size = size;
    s->terminated = data ? data[size] == 0 : 1;
    if (size >= TEXT) size = TEXT - 1;
    if (data && size) memcpy(s->data, data, size);
    s->data[size] = 0;
    s->had_object = qtbus_event_object(event) != NULL;
    if (strlen(s->history) + size + 2 <= sizeof s->history) {
        strncat(s->history, s->data, size);
        strcat(s->history, "|");
    }
    pthread_mutex_unlock(&lock);
}

/* A replier: records the event, then answers it (outside the lock: the sender's reply
 * callback runs inside qtbus_event_reply). */
static void on_request(const qtbus_event *event, void *userdata)
{
    struct slot *s = userdata;
    on_event(event, userdata);
    qtbus_event_reply(event, s->reply, strlen(s->reply));
}

int cpeer_dispatch(const char *type, const char *subtype, const char *text)
{
    qtbus_event_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.type = type;
    desc.subtype = subtype;
    desc.data = text;
    desc.size = text ? strlen(text) : 0;
    return qtbus_dispatch(qtbus_shared(), &desc);
}

int cpeer_signal_define_text_int(const char *type)
{
    static const qtbus_arg args[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
    return qtbus_signal_define(qtbus_shared(), type, args, 2);
}

int cpeer_signal_emit_text_int(const char *type, const char *subtype, const char *text, int32_t number)
{
    return qtbus_signal_emit(qtbus_shared(), type, subtype, text, number);
}

int cpeer_dispatch_json(const char *name, const char *json) { return qtbus_dispatch_json(qtbus_shared(), name, json); }

static int listen_on_with(const char *type, const char *subtype, int32_t priority, const char *reply,
                          qtbus_queue *queue)
{
    int i, status;
    const char *subtypes[1];
    qtbus_sub_options options;
    pthread_mutex_lock(&lock);
    for (i = 0; i < SLOTS && slots[i].used; i++) {
    }
    if (i == SLOTS) {
        pthread_mutex_unlock(&lock);
        return QTBUS_ENOMEM;
    }
    memset(&slots[i], 0, sizeof slots[i]);
    slots[i].used = 1;
    copy_text(slots[i].reply, sizeof slots[i].reply, reply);
    pthread_mutex_unlock(&lock);

    memset(&options, 0, sizeof options);
    subtypes[0] = subtype;
    options.subtypes = subtype ? subtypes : NULL;
    options.subtype_count = subtype ? 1u : 0u;
    options.priority = priority;
    options.queue = queue;
    status = qtbus_subscribe(qtbus_shared(), type, &options, reply ? on_request : on_event, &slots[i], NULL,
                             &slots[i].token);
    if (status < 0) {
        slots[i].used = 0;
        return status;
    }
    return i;
}

static int listen_on(const char *type, const char *subtype) { return listen_on_with(type, subtype, 0, NULL, NULL); }

int cpeer_replier(const char *type, int32_t priority, const char *reply)
{
    return listen_on_with(type, NULL, priority, reply, NULL);
}

size_t cpeer_history(int slot, char *buffer, size_t size)
{
    size_t n;
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, slots[slot].history);
    n = strlen(slots[slot].history);
    pthread_mutex_unlock(&lock);
    return n;
}

/* The C requester: one request at a time (the tests are sequential), its replies and
 * completions recorded under the lock. */
static char request_replies[TEXT];
static int request_completions;

static void on_reply(const qtbus_event *reply, void *userdata)
{
    size_t size = 0;
    const char *data = qtbus_event_data(reply, &size);
    (void)userdata;
    pthread_mutex_lock(&lock);
    if (strlen(request_replies) + size + 2 <= sizeof request_replies) {
        if (data && size) strncat(request_replies, data, size);
        strcat(request_replies, "|");
    }
    pthread_mutex_unlock(&lock);
}

static void on_request_done(void *userdata)
{
    (void)userdata;
    pthread_mutex_lock(&lock);
    request_completions++;
    pthread_mutex_unlock(&lock);
}

int cpeer_request(const char *type, const char *subtype, const char *text)
{
    qtbus_event_desc desc;
    pthread_mutex_lock(&lock);
    request_replies[0] = 0;
    request_completions = 0;
    pthread_mutex_unlock(&lock);
    memset(&desc, 0, sizeof desc);
    desc.type = type;
    desc.subtype = subtype;
    desc.data = text;
    desc.size = text ? strlen(text) : 0;
    return qtbus_request(qtbus_shared(), &desc, on_reply, NULL, on_request_done);
}

size_t cpeer_request_replies(char *buffer, size_t size)
{
    size_t n;
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, request_replies);
    n = strlen(request_replies);
    pthread_mutex_unlock(&lock);
    return n;
}

int cpeer_request_completions(void)
{
    int n;
    pthread_mutex_lock(&lock);
    n = request_completions;
    pthread_mutex_unlock(&lock);
    return n;
}

int cpeer_command_execute(uint64_t command, const char *text)
{
    qtbus_command c;
    qtbus_event_desc desc;
    c.id = command;
    if (!text) return qtbus_command_execute(c, NULL, NULL);
    memset(&desc, 0, sizeof desc);
    desc.type = "CInput";
    desc.data = text;
    desc.size = strlen(text);
    return qtbus_command_execute(c, &desc, NULL);
}

int cpeer_command_set_enabled(uint64_t command, int enabled)
{
    qtbus_command c;
    c.id = command;
    return qtbus_command_set_enabled(c, enabled);
}

int cpeer_command_is_executing(uint64_t command)
{
    qtbus_command c;
    c.id = command;
    return qtbus_command_is_executing(c);
}

int cpeer_source_connect(uint64_t source)
{
    qtbus_source s;
    s.id = source;
    return qtbus_source_connect(s);
}

int cpeer_listen(const char *type, const char *subtype) { return listen_on(type, subtype); }
int cpeer_listen_json(const char *name) { return listen_on(QTBUS_JSON_TYPE, name); }

int cpeer_listen_queued(const char *type, const char *subtype)
{
    static qtbus_queue *queue; /* one serial queue for the process, never released */
    pthread_mutex_lock(&lock);
    if (!queue) queue = qtbus_queue_create("cpeer.queued");
    pthread_mutex_unlock(&lock);
    if (!queue) return QTBUS_ENOMEM;
    return listen_on_with(type, subtype, 0, NULL, queue);
}

int cpeer_count(int slot)
{
    int n;
    pthread_mutex_lock(&lock);
    n = slots[slot].count;
    pthread_mutex_unlock(&lock);
    return n;
}

size_t cpeer_last_data(int slot, char *buffer, size_t size)
{
    size_t n;
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, slots[slot].data);
    n = slots[slot].size;
    pthread_mutex_unlock(&lock);
    return n;
}

void cpeer_last_subtype(int slot, char *buffer, size_t size)
{
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, slots[slot].subtype);
    pthread_mutex_unlock(&lock);
}

void cpeer_last_type(int slot, char *buffer, size_t size)
{
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, slots[slot].type);
    pthread_mutex_unlock(&lock);
}

int cpeer_last_terminated(int slot)
{
    int t;
    pthread_mutex_lock(&lock);
    t = slots[slot].terminated;
    pthread_mutex_unlock(&lock);
    return t;
}

int cpeer_last_had_object(int slot)
{
    int t;
    pthread_mutex_lock(&lock);
    t = slots[slot].had_object;
    pthread_mutex_unlock(&lock);
    return t;
}

int cpeer_stop(int slot)
{
    int status = qtbus_token_dispose(slots[slot].token);
    pthread_mutex_lock(&lock);
    slots[slot].used = 0;
    pthread_mutex_unlock(&lock);
    return status;
}

size_t cpeer_malloc_usable_size(const void *pointer) { return malloc_usable_size((void *)pointer); }
