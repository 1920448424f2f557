/* SPDX-License-Identifier: MIT */
/*
 * case_signals.c -- case 7: typed signals.  Emit of a (const char *, int32_t) signal to
 * 1, 10 and 100 handlers that take those parameters:
 *
 *   qtbus          qtbus_signal_emit(bus, "Login", NULL, "alice", n), handlers connected
 *                  with qtbus_signal_connect (called directly: the signature fits the
 *                  argument registers);
 *   qtbus plain    qtbus_dispatch of an event with bytes of the same size to plain
 *                  qtbus_subscribe handlers: the per-handler cost the typed call is
 *                  held to (PERFORMANCE.md: within 2x);
 *   GLib generic   g_signal_emit of a signal with (G_TYPE_STRING, G_TYPE_INT) and no
 *                  marshaller given, so GLib's generic one (g_cclosure_marshal_generic,
 *                  libffi, with its va_list variant for single-handler emissions);
 *   GLib specific  the same signal with a marshaller written for it, in the style
 *                  glib-genmarshal writes VOID:STRING,INT, as GLib code that cares
 *                  about emission cost does;
 * and the C++ signals of (const char *, int32_t), their slots all the function h_slot:
 *   qtbus.hpp      qtbus::signal<void(const char *, int32_t)>: packed at compile time,
 *                  dispatched by type id, each slot reading the event's bytes
 *                  (lib_qtbus_cxx.cpp);
 *   Boost.Signals2 boost::signals2::signal, its default (thread-safe) mutex policy
 *                  (lib_boost.cpp);
 *   libsigc++      sigc::signal, not thread-safe (lib_sigc.cpp).
 * The string parameter is G_SIGNAL_TYPE_STATIC_SCOPE, so GLib does not copy it; qtbus
 * copies it (into the event's bytes, no allocation); Boost and sigc++ pass the pointer.
 *
 * Its own table (the columns are not the libraries of the other cases); every
 * repetition checks the handler count, as everywhere in bench-c.
 */
#define _GNU_SOURCE
#include "bench_c.h"

#include <glib-object.h>
#include <qtbus.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { S_TYPED, S_PLAIN, S_GENERIC, S_SPECIFIC, S_CXX, S_BOOST, S_SIGC, NSIGCOL };
static const char *const sig_head[NSIGCOL] = {"qtbus",     "qtbus plain",    "GLib generic", "GLib specific",
                                              "qtbus.hpp", "Boost.Signals2", "libsigc++"};
static const char *const sig_key[NSIGCOL] = {"qtbus_signal",     "qtbus_plain",  "glib_generic", "glib_specific",
                                             "qtbus_cxx_signal", "boost_signal", "sigc_signal"};
/* The C++ columns' implementations, by column. */
static const bench_sig_impl *sig_impl(int kind)
{
    return kind == S_CXX ? &bench_sig_qtbus_cxx : kind == S_BOOST ? &bench_sig_boost : &bench_sig_sigc;
}

/* ---- GLib: one object type with the two signals ------------------------------ */

typedef struct {
    GObject parent;
} SigObj;
typedef struct {
    GObjectClass parent_class;
} SigObjClass;

G_DEFINE_TYPE(SigObj, sig_obj, G_TYPE_OBJECT)

static guint generic_signal, specific_signal;

/* What glib-genmarshal writes for VOID:STRING,INT (written out here, not generated). */
static void marshal_VOID__STRING_INT(GClosure *closure, GValue *return_value, guint n_param_values,
                                     const GValue *param_values, gpointer invocation_hint, gpointer marshal_data)
{
    typedef void (*GMarshalFunc_VOID__STRING_INT)(gpointer data1, gpointer arg1, gint arg2, gpointer data2);
    GCClosure *cc = (GCClosure *)closure;
    gpointer data1, data2;
    (void)return_value;
    (void)invocation_hint;
    g_return_if_fail(n_param_values == 3);
    if (G_CCLOSURE_SWAP_DATA(closure)) {
        data1 = closure->data;
        data2 = g_value_peek_pointer(param_values + 0);
    } else {
        data1 = g_value_peek_pointer(param_values + 0);
        data2 = closure->data;
    }
    GMarshalFunc_VOID__STRING_INT callback =
        (GMarshalFunc_VOID__STRING_INT)(marshal_data ? marshal_data : cc->callback);
    callback(data1, (gpointer)g_value_get_string(param_values + 1), g_value_get_int(param_values + 2), data2);
}

static void sig_obj_class_init(SigObjClass *klass)
{
    GType string = G_TYPE_STRING | G_SIGNAL_TYPE_STATIC_SCOPE;
    generic_signal = g_signal_new("login-generic", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                  G_TYPE_NONE, 2, string, G_TYPE_INT);
    specific_signal = g_signal_new("login-specific", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                   marshal_VOID__STRING_INT, G_TYPE_NONE, 2, string, G_TYPE_INT);
}

static void sig_obj_init(SigObj *self) { (void)self; }

/* ---- the four subjects -------------------------------------------------------- */

typedef struct {
    int kind;
    size_t handlers;
    qtbus_bus *bus;
    GObject *obj;
    void *cxx; /* a C++ column's signal */
} sig_subject;

static const qtbus_arg login_args[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};

static void sig_setup(sig_subject *s, int kind, size_t handlers)
{
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->handlers = handlers;
    if (kind >= S_CXX) {
        s->cxx = sig_impl(kind)->create(handlers);
        return;
    }
    if (kind == S_TYPED || kind == S_PLAIN) {
        s->bus = qtbus_bus_create();
        if (!s->bus) bench_fail("qtbus_bus_create failed");
        if (kind == S_TYPED && qtbus_signal_define(s->bus, "Login", login_args, 2) != QTBUS_OK)
            bench_fail("qtbus_signal_define failed");
        for (size_t i = 0; i < handlers; i++) {
            int rc = kind == S_TYPED
                         ? qtbus_signal_connect(s->bus, "Login", NULL, QTBUS_CALLBACK(h_signal), NULL, NULL, NULL)
                         : qtbus_subscribe(s->bus, "Login", NULL, h_qtbus, NULL, NULL, NULL);
            if (rc != QTBUS_OK) bench_fail("qtbus connect/subscribe failed: %d", rc);
        }
        return;
    }
    s->obj = g_object_new(sig_obj_get_type(), NULL);
    const char *name = kind == S_GENERIC ? "login-generic" : "login-specific";
    for (size_t i = 0; i < handlers; i++)
        if (g_signal_connect(s->obj, name, G_CALLBACK(h_glib_signal), NULL) == 0) bench_fail("g_signal_connect failed");
}

static void sig_teardown(sig_subject *s)
{
    if (s->bus) qtbus_bus_destroy(s->bus);
    if (s->obj) g_object_unref(s->obj);
    if (s->cxx) sig_impl(s->kind)->destroy(s->cxx);
}

static double measure_signal(void *p, uint64_t n)
{
    sig_subject *s = p;
    bench_count_reset();
    double t0 = now();
    switch (s->kind) {
    case S_TYPED:
        for (uint64_t i = 0; i < n; i++)
            qtbus_signal_emit(s->bus, "Login", NULL, "alice", (int32_t)i);
        break;
    case S_PLAIN: {
        /* The size a packed (const char *, int32_t) "alice" has: 8 + 8 + 16 + 6. */
        static const char bytes[38] = "alice";
        qtbus_event_desc d = {.type = "Login", .data = bytes, .size = sizeof bytes};
        for (uint64_t i = 0; i < n; i++)
            qtbus_dispatch(s->bus, &d);
        break;
    }
    case S_GENERIC:
        for (uint64_t i = 0; i < n; i++)
            g_signal_emit(s->obj, generic_signal, 0, "alice", (gint)i);
        break;
    case S_CXX: {
        uint64_t reached = sig_impl(S_CXX)->emit(s->cxx, n);
        if (reached != n * s->handlers)
            bench_fail("qtbus.hpp: emit reported %llu deliveries, expected %llu", (unsigned long long)reached,
                       (unsigned long long)(n * s->handlers));
        break;
    }
    case S_BOOST:
    case S_SIGC: (void)sig_impl(s->kind)->emit(s->cxx, n); break;
    default:
        for (uint64_t i = 0; i < n; i++)
            g_signal_emit(s->obj, specific_signal, 0, "alice", (gint)i);
        break;
    }
    double t = now() - t0;
    expect_count(sig_head[s->kind], "typed signal emit", bench_count(), n * s->handlers);
    return t;
}

/* ---- the case and its table ----------------------------------------------------- */

static const int sig_counts[] = {1, 10, 100};
#define NSIGROW 3
static row sig_rows[NSIGROW];
static int sig_nrows;

/* Column a over column b: the median of the per-repetition ratios (as report.c). */
static double sig_ratio(const row *r, int a, int b)
{
    const cell *x = &r->c[a], *y = &r->c[b];
    if (!x->present || !y->present || x->nrep != y->nrep) return 0;
    double v[MAXREP];
    for (int i = 0; i < x->nrep; i++)
        v[i] = y->rep[i] > 0 ? x->rep[i] / y->rep[i] : 0;
    return median_of(v, x->nrep);
}

/* Per-handler cost of column c: (100 handlers - 1 handler) / 99, per repetition, then the
 * median; and the median ratio of typed over plain per repetition. */
static double per_handler(int c, int rep)
{
    const row *one = &sig_rows[0], *hundred = &sig_rows[NSIGROW - 1];
    return (hundred->c[c].rep[rep] - one->c[c].rep[rep]) / 99.0;
}

static double per_handler_median(int c)
{
    double v[MAXREP];
    int n = sig_rows[0].c[c].nrep;
    for (int i = 0; i < n; i++)
        v[i] = per_handler(c, i);
    return median_of(v, n);
}

static double per_handler_ratio(void)
{
    double v[MAXREP];
    int n = sig_rows[0].c[S_TYPED].nrep;
    for (int i = 0; i < n; i++) {
        double plain = per_handler(S_PLAIN, i);
        v[i] = plain > 0 ? per_handler(S_TYPED, i) / plain : 0;
    }
    return median_of(v, n);
}

void case_signals(void)
{
    static const char *ids[] = {"signal_1", "signal_10", "signal_100"};
    static const char *titles[] = {"emit, 1 handler", "emit, 10 handlers", "emit, 100 handlers"};
    for (int k = 0; k < NSIGROW; k++) {
        row *r = &sig_rows[sig_nrows++];
        init_own_row(r, ids[k], titles[k], sig_counts[k]);
        sig_subject subj[NSIGCOL];
        subject s[NCOL] = {{0}};
        for (int i = 0; i < NSIGCOL; i++) {
            sig_setup(&subj[i], i, (size_t)sig_counts[k]);
            s[i] = (subject){measure_signal, &subj[i], 64};
        }
        run_interleaved(r, s);
        for (int i = 0; i < NSIGCOL; i++)
            sig_teardown(&subj[i]);
    }
}

static void fmt(char *buf, size_t size, double v)
{
    snprintf(buf, size, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
}

/* The C++ columns, beside the C typed path (qtbus). */
static void print_signals_cxx(FILE *f, int markdown)
{
    static const int cols[] = {S_CXX, S_BOOST, S_SIGC, S_TYPED};
    enum { N = sizeof cols / sizeof cols[0] };
    char v[32];
    if (markdown)
        fprintf(f, "\n## Typed signals in C++: `(const char *, int32_t)`\n\n| case | unit |");
    else
        fprintf(f, "\ntyped signal in C++ (const char *, int32_t), median ns");
    for (int i = 0; i < N; i++)
        fprintf(f, markdown ? " %s |" : " %14s", sig_head[cols[i]]);
    if (markdown)
        fprintf(f, " hpp/Boost | hpp/sigc++ | hpp/qtbus |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    else
        fprintf(f, " %10s %10s %9s\n", "hpp/Boost", "hpp/sigc++", "hpp/qtbus");
    for (int k = 0; k < NSIGROW; k++) {
        const row *r = &sig_rows[k];
        fprintf(f, markdown ? "| %s | ns |" : "%-50s", r->title);
        for (int i = 0; i < N; i++) {
            fmt(v, sizeof v, r->c[cols[i]].median);
            fprintf(f, markdown ? " %s |" : " %14s", v);
        }
        double rb = sig_ratio(r, S_CXX, S_BOOST), rs = sig_ratio(r, S_CXX, S_SIGC), rq = sig_ratio(r, S_CXX, S_TYPED);
        if (markdown)
            fprintf(f, " %.3gx | %.3gx | %.3gx |\n", rb, rs, rq);
        else
            fprintf(f, " %9.3gx %9.3gx %8.3gx\n", rb, rs, rq);
    }
    fprintf(f, "%sper handler, (100 handlers - 1) / 99: qtbus.hpp %.2f ns, Boost.Signals2 %.2f ns, libsigc++ %.2f ns\n",
            markdown ? "\n" : "", per_handler_median(S_CXX), per_handler_median(S_BOOST), per_handler_median(S_SIGC));
}

void print_signals(FILE *f, int markdown)
{
    if (sig_nrows < NSIGROW) return;
    char v[32];
    if (markdown)
        fprintf(f, "\n## Typed signals: `(const char *, int32_t)`\n\n| case | unit |");
    else
        fprintf(f, "typed signal (const char *, int32_t), median ns    ");
    for (int i = 0; i < S_CXX; i++)
        fprintf(f, markdown ? " %s |" : " %13s", sig_head[i]);
    if (markdown)
        fprintf(f, " q/GLib generic | q/GLib specific | q/plain |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    else
        fprintf(f, " %14s %15s %8s\n", "q/GLib generic", "q/GLib specific", "q/plain");
    for (int k = 0; k < NSIGROW; k++) {
        const row *r = &sig_rows[k];
        fprintf(f, markdown ? "| %s | ns |" : "%-50s", r->title);
        for (int i = 0; i < S_CXX; i++) {
            fmt(v, sizeof v, r->c[i].median);
            fprintf(f, markdown ? " %s |" : " %13s", v);
        }
        double rg = sig_ratio(r, S_TYPED, S_GENERIC), rs = sig_ratio(r, S_TYPED, S_SPECIFIC),
               rp = sig_ratio(r, S_TYPED, S_PLAIN);
        if (markdown)
            fprintf(f, " %.3gx | %.3gx | %.3gx |\n", rg, rs, rp);
        else
            fprintf(f, " %13.3gx %14.3gx %7.3gx\n", rg, rs, rp);
    }
    double typed = per_handler_median(S_TYPED), plain = per_handler_median(S_PLAIN);
    double ratio = per_handler_ratio();
    int faster = 1;
    for (int k = 0; k < NSIGROW; k++)
        faster &= sig_ratio(&sig_rows[k], S_TYPED, S_GENERIC) < 1;
    fprintf(f,
            "%sper handler, (100 handlers - 1) / 99: qtbus %.2f ns, qtbus plain %.2f ns, ratio %.2fx "
            "(target <= 2x): %s\n",
            markdown ? "\n" : "", typed, plain, ratio, ratio <= 2 ? "met" : "NOT met");
    fprintf(f, "%sfaster than GLib's generic marshaller on every row: %s\n", markdown ? "\n" : "",
            faster ? "met" : "NOT met");
    print_signals_cxx(f, markdown);
}

void write_signals_json(FILE *f) { write_own_rows_json(f, "typed_signals", sig_rows, sig_nrows, sig_key, NSIGCOL); }
