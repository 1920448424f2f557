/* See include/qtevent_ctest.h.  A fixed table of slots guarded by a mutex: the handler
 * may run on any thread. */
#include "qtevent_ctest.h"
#include <qtbus.h>
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
    pthread_mutex_unlock(&lock);
}

int ctest_dispatch(const char *type, const char *subtype, const char *text)
{
    qtbus_event_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.type = type;
    desc.subtype = subtype;
    desc.data = text;
    desc.size = text ? strlen(text) : 0;
    return qtbus_dispatch(qtbus_shared(), &desc);
}

int ctest_dispatch_json(const char *name, const char *json)
{
    return qtbus_dispatch_json(qtbus_shared(), name, json);
}

static int listen_on(const char *type, const char *subtype, qtbus_queue *queue)
{
    int i, status;
    const char *subtypes[1];
    qtbus_sub_options options;
    pthread_mutex_lock(&lock);
    for (i = 0; i < SLOTS && slots[i].used; i++) {}
    if (i == SLOTS) { pthread_mutex_unlock(&lock); return QTBUS_ENOMEM; }
    memset(&slots[i], 0, sizeof slots[i]);
    slots[i].used = 1;
    pthread_mutex_unlock(&lock);

    memset(&options, 0, sizeof options);
    subtypes[0] = subtype;
    options.subtypes = subtype ? subtypes : NULL;
    options.subtype_count = subtype ? 1u : 0u;
    options.queue = queue;
    status = qtbus_subscribe(qtbus_shared(), type, &options, on_event, &slots[i], NULL, &slots[i].token);
    if (status < 0) { slots[i].used = 0; return status; }
    return i;
}

int ctest_listen(const char *type, const char *subtype) { return listen_on(type, subtype, NULL); }
int ctest_listen_json(const char *name) { return listen_on(QTBUS_JSON_TYPE, name, NULL); }

int ctest_listen_queued(const char *type, const char *subtype)
{
    static qtbus_queue *queue;  /* one serial queue for the process, never released */
    pthread_mutex_lock(&lock);
    if (!queue) queue = qtbus_queue_create("ctest.queued");
    pthread_mutex_unlock(&lock);
    if (!queue) return QTBUS_ENOMEM;
    return listen_on(type, subtype, queue);
}

int ctest_count(int slot)
{
    int n;
    pthread_mutex_lock(&lock);
    n = slots[slot].count;
    pthread_mutex_unlock(&lock);
    return n;
}

size_t ctest_last_data(int slot, char *buffer, size_t size)
{
    size_t n;
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, slots[slot].data);
    n = slots[slot].size;
    pthread_mutex_unlock(&lock);
    return n;
}

void ctest_last_subtype(int slot, char *buffer, size_t size)
{
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, slots[slot].subtype);
    pthread_mutex_unlock(&lock);
}

void ctest_last_type(int slot, char *buffer, size_t size)
{
    pthread_mutex_lock(&lock);
    copy_text(buffer, size, slots[slot].type);
    pthread_mutex_unlock(&lock);
}

int ctest_last_terminated(int slot)
{
    int t;
    pthread_mutex_lock(&lock);
    t = slots[slot].terminated;
    pthread_mutex_unlock(&lock);
    return t;
}

int ctest_last_had_object(int slot)
{
    int t;
    pthread_mutex_lock(&lock);
    t = slots[slot].had_object;
    pthread_mutex_unlock(&lock);
    return t;
}

int ctest_stop(int slot)
{
    int status = qtbus_token_dispose(slots[slot].token);
    pthread_mutex_lock(&lock);
    slots[slot].used = 0;
    pthread_mutex_unlock(&lock);
    return status;
}
