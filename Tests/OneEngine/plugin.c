/* SPDX-License-Identifier: MIT */
/* A C plugin that links libqtbus and is dlopen()ed by the Swift host (Package.swift in
 * this directory; scripts/one-engine.sh runs both).  Built with nothing but pkg-config:
 *
 *   cc -shared -fPIC plugin.c $(pkg-config --cflags --libs qtbus) -o libqtbus_oneengine_plugin.so
 *
 * Every qtbus_* call below goes through the plugin's own references to qtbus_*; which
 * definition they bind to (the host executable's engine or libqtbus.so's) is what the
 * host checks. */
#define _GNU_SOURCE /* dladdr */
#include <qtbus.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define PLUGIN_API __attribute__((visibility("default")))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static qtbus_token token;
static int received;
static int released;
static char last_data[256];
static char last_subtype[256];
/* What qtbus_errmsg() said on this thread right after plugin_start()'s qtbus_shared(). */
static char start_errmsg[512];

static void copy_text(char *dst, size_t cap, const char *src, size_t n)
{
    if (!src) n = 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(dst, src, n);
    dst[n] = 0;
}

static void on_event(const qtbus_event *event, void *userdata)
{
    (void)userdata;
    size_t size = 0;
    const char *data = qtbus_event_data(event, &size);
    const char *subtype = qtbus_event_subtype(event);
    pthread_mutex_lock(&lock);
    received++;
    copy_text(last_data, sizeof last_data, data, size);
    copy_text(last_subtype, sizeof last_subtype, subtype, subtype ? strlen(subtype) : 0);
    pthread_mutex_unlock(&lock);
}

static void on_release(void *userdata)
{
    (void)userdata;
    pthread_mutex_lock(&lock);
    released++;
    pthread_mutex_unlock(&lock);
}

/* Subscribes a C handler to `type` on qtbus_shared(); returns the bus the plugin sees
 * (NULL when the subscription failed). */
PLUGIN_API qtbus_bus *plugin_start(const char *type)
{
    qtbus_bus *bus = qtbus_shared();
    strncpy(start_errmsg, qtbus_errmsg(), sizeof start_errmsg - 1);
    if (qtbus_subscribe(bus, type, NULL, on_event, NULL, on_release, &token) != QTBUS_OK) return NULL;
    return bus;
}

/* qtbus_errmsg() as plugin_start() read it after its first qtbus_shared(): the library's
 * warning when this plugin got an engine of its own. */
PLUGIN_API const char *plugin_start_errmsg(void) { return start_errmsg; }

/* Dispatches a C event (no object) on qtbus_shared(); returns what qtbus_dispatch()
 * returns: the number of subscriptions reached, or a negative status. */
PLUGIN_API int plugin_dispatch(const char *type, const char *subtype, const char *text)
{
    qtbus_event_desc event = {.type = type, .subtype = subtype, .data = text, .size = text ? strlen(text) : 0};
    return qtbus_dispatch(qtbus_shared(), &event);
}

/* What the C handler received so far: the count, and the last event's data and
 * subtype copied into the caller's buffers (each `cap` bytes, NUL-terminated). */
PLUGIN_API int plugin_received(char *data, char *subtype, size_t cap)
{
    pthread_mutex_lock(&lock);
    int n = received;
    if (data && cap) copy_text(data, cap, last_data, strlen(last_data));
    if (subtype && cap) copy_text(subtype, cap, last_subtype, strlen(last_subtype));
    pthread_mutex_unlock(&lock);
    return n;
}

/* How many times the subscription's release hook ran (1 after plugin_stop()). */
PLUGIN_API int plugin_released(void)
{
    pthread_mutex_lock(&lock);
    int n = released;
    pthread_mutex_unlock(&lock);
    return n;
}

/* Disposes the subscription; returns qtbus_token_dispose()'s status. */
PLUGIN_API int plugin_stop(void) { return qtbus_token_dispose(token); }

/* The address of qtbus_shared as this plugin's references resolved it. */
PLUGIN_API void *plugin_qtbus_shared_address(void) { return (void *)(uintptr_t)&qtbus_shared; }

/* The path of the loaded object that contains `address` (dladdr), or NULL.  For the host,
 * whose Swift Glibc module does not declare dladdr. */
PLUGIN_API const char *plugin_object_of(const void *address)
{
    Dl_info info;
    if (!address || !dladdr(address, &info)) return NULL;
    return info.dli_fname;
}
