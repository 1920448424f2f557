/* SPDX-License-Identifier: MIT */
/*
 * test_signals_threads: emits, connects and disposes on four threads at once, every
 * delivery counted; and four threads defining one type at once, of which exactly one
 * signature wins.
 *
 * Moved verbatim from test_signals.c, which tested every behaviour of typed signals in
 * one file; what the files share is in test_signals.h.
 */
#include "test_signals.h"

/* ---------------------------------------------------------------------------------
 * Four threads: emit, connect and dispose at once; every delivery counted
 * ------------------------------------------------------------------------------- */

#define STRESS_THREADS 4
#define STRESS_EMITS 3000

typedef struct stress {
    qtbus_bus *bus;
    pthread_barrier_t start;
    atomic_llong sum; /* of the numbers the fixed handler received */
    atomic_int fixed_calls;
    atomic_int bad_strings;
    atomic_int errors;
    atomic_int churn_calls;
    tu_rec churn_rec;
} stress;

static const qtbus_arg stress_args[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT64, QTBUS_ARG_DOUBLE};

static void stress_fixed(const char *text, int64_t number, double half, void *userdata)
{
    stress *s = userdata;
    char expect[32];
    snprintf(expect, sizeof expect, "n%lld", (long long)number);
    if (strcmp(text, expect) != 0 || half != (double)number / 2) atomic_fetch_add(&s->bad_strings, 1);
    atomic_fetch_add(&s->sum, number);
    atomic_fetch_add(&s->fixed_calls, 1);
}

/* One per churned connection: a handler call after its release would read freed
 * memory (ASan, valgrind); a release while a call runs is counted. */
typedef struct churned {
    tu_rec rec;
    stress *s;
} churned;

static void stress_churn(const char *text, int64_t number, double half, void *userdata)
{
    (void)text;
    (void)number;
    (void)half;
    churned *c = userdata;
    tu_rec_handler(NULL, &c->rec);
    atomic_fetch_add(&c->s->churn_calls, 1);
}

static void stress_release(void *userdata)
{
    churned *c = userdata;
    tu_rec_release(&c->rec);
    if (atomic_load(&c->rec.release_while_running) != 0) atomic_fetch_add(&c->s->errors, 1);
    atomic_fetch_add(&c->s->churn_rec.releases, 1);
    free(c);
}

static void stress_thread(int index, void *ctx)
{
    stress *s = ctx;
    pthread_barrier_wait(&s->start);
    for (int i = 0; i < STRESS_EMITS; i++) {
        int64_t number = (int64_t)index * STRESS_EMITS + i;
        char text[32];
        snprintf(text, sizeof text, "n%lld", (long long)number);
        if (qtbus_signal_emit(s->bus, "Stress", NULL, text, number, (double)number / 2) < 1)
            atomic_fetch_add(&s->errors, 1);
        if (i % 16 == 0) {
            churned *c = malloc(sizeof *c);
            CHECK(c != NULL);
            tu_rec_init(&c->rec);
            c->s = s;
            qtbus_token t;
            if (qtbus_signal_connect(s->bus, "Stress", NULL, QTBUS_CALLBACK(stress_churn), c, stress_release, &t) !=
                    QTBUS_OK ||
                qtbus_token_dispose(t) != QTBUS_OK)
                atomic_fetch_add(&s->errors, 1);
        }
    }
}

static void test_stress(void)
{
    stress s;
    memset(&s, 0, sizeof s);
    tu_rec_init(&s.churn_rec);
    s.bus = qtbus_bus_create();
    CHECK(s.bus != NULL);
    pthread_barrier_init(&s.start, NULL, STRESS_THREADS);
    CHECK_EQ_INT(qtbus_signal_define(s.bus, "Stress", stress_args, 3), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(s.bus, "Stress", NULL, QTBUS_CALLBACK(stress_fixed), &s, NULL, NULL), QTBUS_OK);
    tu_run_threads(STRESS_THREADS, stress_thread, &s);
    pthread_barrier_destroy(&s.start);
    long long n = (long long)STRESS_THREADS * STRESS_EMITS;
    CHECK_EQ_INT(atomic_load(&s.errors), 0);
    CHECK_EQ_INT(atomic_load(&s.bad_strings), 0);
    CHECK_EQ_INT(atomic_load(&s.fixed_calls), n);
    CHECK(atomic_load(&s.sum) == n * (n - 1) / 2);
    int connects = STRESS_THREADS * ((STRESS_EMITS + 15) / 16);
    CHECK_EQ_INT(atomic_load(&s.churn_rec.releases), connects);
    CHECK_EQ_INT(qtbus_bus_destroy(s.bus), QTBUS_OK);
}

/* Four threads define one type at once, two with one signature and two with another:
 * exactly one signature wins, so exactly two calls succeed. */
typedef struct define_race {
    qtbus_bus *bus;
    pthread_barrier_t start;
    atomic_int ok, einval, other;
} define_race;

static void definer(int index, void *ctx)
{
    define_race *r = ctx;
    pthread_barrier_wait(&r->start);
    int rc = index % 2 ? qtbus_signal_define(r->bus, "Race", text_number_args, 2)
                       : qtbus_signal_define(r->bus, "Race", numbers_args, 5);
    atomic_fetch_add(rc == QTBUS_OK ? &r->ok : rc == QTBUS_EINVAL ? &r->einval : &r->other, 1);
}

static void test_define_race(void)
{
    for (int round = 0; round < 50; round++) {
        define_race r;
        memset(&r, 0, sizeof r);
        r.bus = qtbus_bus_create();
        CHECK(r.bus != NULL);
        pthread_barrier_init(&r.start, NULL, 4);
        tu_run_threads(4, definer, &r);
        pthread_barrier_destroy(&r.start);
        CHECK_EQ_INT(atomic_load(&r.ok), 2);
        CHECK_EQ_INT(atomic_load(&r.einval), 2);
        CHECK_EQ_INT(atomic_load(&r.other), 0);
        CHECK_EQ_INT(qtbus_bus_destroy(r.bus), QTBUS_OK);
    }
}

int main(void)
{
    test_stress();
    test_define_race();
    printf("test_signals_threads: ok\n");
    return 0;
}
