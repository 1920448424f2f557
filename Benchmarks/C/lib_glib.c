/* SPDX-License-Identifier: MIT */
/*
 * lib_glib.c -- GLib's GSignal: a GObject subclass with one signal without arguments
 * ("ping", VOID:VOID marshaller), handlers connected with g_signal_connect(), emitted
 * with g_signal_emit() and the signal id looked up once, as GObject code does.
 */
#include "bench.h"

#include <glib-object.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    GObject parent;
} BenchObj;
typedef struct {
    GObjectClass parent_class;
} BenchObjClass;

G_DEFINE_TYPE(BenchObj, bench_obj, G_TYPE_OBJECT)

static guint ping_signal;

static void bench_obj_class_init(BenchObjClass *klass)
{
    ping_signal = g_signal_new("ping", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                               g_cclosure_marshal_VOID__VOID, G_TYPE_NONE, 0);
}

static void bench_obj_init(BenchObj *self) { (void)self; }

typedef struct {
    GObject *obj;
    gulong *ids;
    size_t n, cap;
} gctx;

static void *gs_create(void)
{
    gctx *c = calloc(1, sizeof *c);
    if (!c) bench_fail("glib: out of memory");
    c->obj = g_object_new(bench_obj_get_type(), NULL);
    return c;
}

static void gs_reserve(void *s, size_t n)
{
    gctx *c = s;
    if (n <= c->cap) return;
    c->ids = realloc(c->ids, n * sizeof *c->ids);
    if (!c->ids) bench_fail("glib: out of memory");
    for (size_t i = c->cap; i < n; i++)
        c->ids[i] = 0;
    c->cap = n;
}

static void gs_connect_n(void *s, size_t n)
{
    gctx *c = s;
    gs_reserve(c, c->n + n);
    for (size_t i = 0; i < n; i++) {
        gulong id = g_signal_connect(c->obj, "ping", G_CALLBACK(h_glib), NULL);
        if (id == 0) bench_fail("glib: g_signal_connect failed");
        c->ids[c->n++] = id;
    }
}

static void gs_dispatch(void *s, uint64_t iters)
{
    gctx *c = s;
    for (uint64_t i = 0; i < iters; i++)
        g_signal_emit(c->obj, ping_signal, 0);
}

static void gs_sub_dispose(void *s, uint64_t iters)
{
    gctx *c = s;
    for (uint64_t i = 0; i < iters; i++) {
        gulong id = g_signal_connect(c->obj, "ping", G_CALLBACK(h_glib), NULL);
        g_signal_handler_disconnect(c->obj, id);
    }
}

static void gs_destroy(void *s)
{
    gctx *c = s;
    g_object_unref(c->obj);
    free(c->ids);
    free(c);
}

static const char *gs_version(void)
{
    static char v[32];
    snprintf(v, sizeof v, "%u.%u.%u", glib_major_version, glib_minor_version, glib_micro_version);
    return v;
}

const bench_lib bench_glib = {
    .key = "glib",
    .name = "GLib",
    .thread_safe = 1,
    .create = gs_create,
    .reserve = gs_reserve,
    .connect_n = gs_connect_n,
    .dispatch = gs_dispatch,
    .sub_dispose = gs_sub_dispose,
    .destroy = gs_destroy,
    .version = gs_version,
};
