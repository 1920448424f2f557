/* SPDX-License-Identifier: MIT */
/*
 * test_signals_bad_input: every misuse of qtbus_signal_define, connect, emit, emitv
 * and requestv is a status that changes nothing.
 *
 * Moved verbatim from test_signals.c, which tested every behaviour of typed signals in
 * one file; what the files share is in test_signals.h.
 */
#include "test_signals.h"

/* ---------------------------------------------------------------------------------
 * Bad input: a status, and nothing changed
 * ------------------------------------------------------------------------------- */

static void test_bad_input(qtbus_bus *bus)
{
    atomic_int n = 0;
    counted c;
    tu_rec_init(&c.rec);
    tu_rec rec;
    tu_rec_init(&rec);
    const qtbus_arg bad_kind0[] = {QTBUS_ARG_INT32, (qtbus_arg)0};
    const qtbus_arg bad_kind8[] = {(qtbus_arg)8};
    qtbus_arg seventeen[17];
    for (int i = 0; i < 17; i++)
        seventeen[i] = QTBUS_ARG_INT32;
    char long_name[300];
    memset(long_name, 'n', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;

    /* define */
    CHECK_EQ_INT(qtbus_signal_define(NULL, "Bad", text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, NULL, text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "", text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, long_name, text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad\xff", text_number_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", NULL, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", seventeen, 17), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", bad_kind0, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", bad_kind8, 1), QTBUS_EINVAL);
    /* None of those defined "Bad". */
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Bad", NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Bad", NULL, QTBUS_CALLBACK(on_nothing), &n, NULL, NULL), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Bad", seventeen, 16), QTBUS_OK);

    /* A different definition changes nothing; the same one is fine. */
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", text_number_args, 2), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", text_number_args, 1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", numbers_args, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", NULL, 0), QTBUS_EINVAL);
    qtbus_arg copy[2] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
    CHECK_EQ_INT(qtbus_signal_define(bus, "Def", copy, 2), QTBUS_OK);
    copy[1] = QTBUS_ARG_INT64; /* the signature was copied */
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &t), QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Def", NULL, "x", (int32_t)1), 1);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 1);
    /* Signatures are per bus: another bus has none for "Def". */
    qtbus_bus *other = qtbus_bus_create();
    CHECK(other != NULL);
    CHECK_EQ_INT(qtbus_signal_emit(other, "Def", NULL, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_define(other, "Def", numbers_args, 5), QTBUS_OK);
    CHECK_EQ_INT(qtbus_bus_destroy(other), QTBUS_OK);

    /* connect */
    int count = qtbus_subscriber_count(bus, "Def", NULL);
    CHECK_EQ_INT(count, 1);
    qtbus_token out = {77};
    CHECK_EQ_INT(qtbus_signal_connect(NULL, "Def", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    CHECK_EQ_U64(out.id, 0);
    out.id = 77;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", NULL, NULL, &n, tu_rec_release, &out), QTBUS_EINVAL);
    CHECK_EQ_U64(out.id, 0);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Undefined", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_connect(bus, NULL, NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "", NULL, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.flags = 1u << 7;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", &o, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_EINVAL);
    memset(&o, 0, sizeof o);
    o.bag.id = 12345;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Def", &o, QTBUS_CALLBACK(on_counted), &c, counted_release, &out),
                 QTBUS_ESTALE);
    CHECK_EQ_U64(out.id, 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "Def", NULL), count);
    CHECK_EQ_INT(atomic_load(&c.rec.releases), 0); /* a failed call takes nothing */

    /* emit / emitv */
    qtbus_value v[3];
    v[0].str = "x";
    v[1].i32 = 2;
    v[2].i32 = 3;
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, v, 1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, v, 3), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, NULL, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 1u << 5, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", "", 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Undefined", NULL, 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(NULL, "Def", NULL, 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emitv(bus, NULL, NULL, 0, v, 2), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Undefined", NULL, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Def", long_name, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_emit(NULL, "Def", NULL, "x", (int32_t)1), QTBUS_EINVAL);
    CHECK_EQ_INT(qtbus_signal_requestv(bus, "Def", NULL, v, 3, NULL, &rec, tu_rec_release), QTBUS_EINVAL);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&rec.releases), 0);

    /* The signature is unchanged by all of the above. */
    CHECK_EQ_INT(qtbus_signal_emitv(bus, "Def", NULL, 0, v, 2), 1);
    CHECK_EQ_INT(atomic_load(&c.rec.calls), 2);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&c.rec.releases), 1);
    CHECK_REC_SANE(&c.rec);
}

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    test_bad_input(bus);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_signals_bad_input: ok\n");
    return 0;
}
