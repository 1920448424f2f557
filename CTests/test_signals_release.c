/* SPDX-License-Identifier: MIT */
/*
 * test_signals_release: a connection's release hook runs exactly once, whether it
 * ends by dispose, bag or bus destroy.
 *
 * Moved verbatim from test_signals.c, which tested every behaviour of typed signals in
 * one file; what the files share is in test_signals.h.
 */
#include "test_signals.h"

/* ---------------------------------------------------------------------------------
 * Release hooks: once, by dispose, bag and bus destroy
 * ------------------------------------------------------------------------------- */

static void test_release_once(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);
    counted by_token, by_bag, by_destroy;
    tu_rec_init(&by_token.rec);
    tu_rec_init(&by_bag.rec);
    tu_rec_init(&by_destroy.rec);
    CHECK_EQ_INT(qtbus_signal_define(bus, "Rel", text_number_args, 2), QTBUS_OK);
    qtbus_token t;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Rel", NULL, QTBUS_CALLBACK(on_counted), &by_token, counted_release, &t),
                 QTBUS_OK);
    qtbus_bag bag;
    CHECK_EQ_INT(qtbus_bag_create(&bag), QTBUS_OK);
    qtbus_sub_options o;
    memset(&o, 0, sizeof o);
    o.bag = bag;
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Rel", &o, QTBUS_CALLBACK(on_counted), &by_bag, counted_release, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_connect(bus, "Rel", NULL, QTBUS_CALLBACK(on_counted), &by_destroy, counted_release, NULL),
                 QTBUS_OK);
    CHECK_EQ_INT(qtbus_signal_emit(bus, "Rel", NULL, "r", (int32_t)0), 3);
    CHECK_EQ_INT(qtbus_token_dispose(t), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&by_token.rec.releases), 1);
    CHECK_EQ_INT(qtbus_bag_dispose(bag), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&by_bag.rec.releases), 1);
    CHECK_EQ_INT(atomic_load(&by_destroy.rec.releases), 0);
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&by_destroy.rec.releases), 1);
    CHECK_EQ_INT(atomic_load(&by_token.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&by_bag.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&by_destroy.rec.calls), 1);
    CHECK_EQ_INT(atomic_load(&by_token.rec.releases), 1);
    CHECK_EQ_INT(atomic_load(&by_bag.rec.releases), 1);
}

int main(void)
{
    test_release_once();
    printf("test_signals_release: ok\n");
    return 0;
}
