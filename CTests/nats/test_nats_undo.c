/* SPDX-License-Identifier: MIT */
/*
 * test_nats_undo.c -- undoing the bridge's exports and imports.
 *   - qtbus_nats_unexport / _unimport / _unimport_subtype: the type stops crossing;
 *     QTBUS_ESTALE, with qtbus_errmsg(), for what is not exported or imported; the
 *     same import made again works.
 */
#include "nats_secure.h"

/* `call` is QTBUS_ESTALE with one MISUSE record; qtbus_errmsg() printed. */
#define CHECK_STALE(call)                                                                                              \
    do {                                                                                                               \
        atomic_store(&misuse, 0);                                                                                      \
        CHECK_EQ_INT((call), QTBUS_ESTALE);                                                                            \
        printf("%-34s QTBUS_ESTALE: %s\n", #call ":", qtbus_errmsg());                                                 \
        CHECK(strstr(qtbus_errmsg(), "by this bridge (or no longer is)") != NULL);                                     \
        CHECK_EQ_INT(atomic_load(&misuse), 1);                                                                         \
        atomic_store(&misuse, 0);                                                                                      \
    } while (0)

static void undo_case(void)
{
    ns_server server = {.no_jetstream = 1};
    ns_start(&server);
    qtbus_nats *ba = ns_bridge(&server, bus_a, 0, 0), *bb = ns_bridge(&server, bus_b, 0, 0);
    const char *types[] = {"Gone", "Mark", "Price"};
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(qtbus_nats_export(ba, types[i]), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Gone"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import(bb, "Mark"), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_import_subtype(bb, "Price", "EUR"), QTBUS_OK);
    static inbox gone = INBOX, mark = INBOX, price = INBOX;
    qtbus_token tokens[] = {listen_on(bus_b, "Gone", &gone), listen_on(bus_b, "Mark", &mark),
                            listen_on(bus_b, "Price", &price)};
    CHECK_EQ_INT(send_text(bus_a, "Gone", "1"), 1);
    CHECK_WAIT(atomic_load(&gone.count) == 1, TU_WAIT_MS);

    /* Unexported: a's bus no longer has the export's subscription, so nothing is
     * published (the dispatch reaches no handler); Mark still crosses. */
    CHECK_EQ_INT(qtbus_nats_unexport(ba, "Gone"), QTBUS_OK);
    CHECK_EQ_INT(send_text(bus_a, "Gone", "2"), 0);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "1"), 1);
    CHECK_WAIT(atomic_load(&mark.count) == 1, TU_WAIT_MS);
    CHECK_EQ_INT(atomic_load(&gone.count), 1);
    printf("%-34s Gone no longer crosses (dispatch counts 0 handlers on a; Mark after it crossed)\n",
           "unexport(Gone):");
    CHECK_STALE(qtbus_nats_unexport(ba, "Gone"));
    CHECK_STALE(qtbus_nats_unexport(ba, "Never"));
    CHECK_STALE(qtbus_nats_unexport(ba, "Go*"));
    CHECK_EQ_INT(qtbus_nats_export(ba, "Gone"), QTBUS_OK);

    /* Unimported: unimport returns once the server has dropped the subscription, so it
     * sends b no more Mark.  Gone, published after it, arrives; two imports are two
     * nats.c subscriptions, whose events are not ordered between them, so a Mark sent
     * by mistake could come a little later: 100 ms more for it to show. */
    CHECK_EQ_INT(qtbus_nats_unimport(bb, "Mark"), QTBUS_OK);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "2"), 1);
    CHECK_EQ_INT(send_text(bus_a, "Gone", "3"), 1);
    CHECK_WAIT(atomic_load(&gone.count) == 2 && last_is(&gone, "3"), TU_WAIT_MS);
    tu_sleep_ms(100);
    CHECK_EQ_INT(atomic_load(&mark.count), 1);
    printf("%-34s Mark no longer crosses (Gone, exported again, does)\n", "unimport(Mark):");
    CHECK_STALE(qtbus_nats_unimport(bb, "Mark"));
    CHECK_STALE(qtbus_nats_unimport(bb, "Never"));
    /* Imported again: crosses again. */
    CHECK_EQ_INT(qtbus_nats_import(bb, "Mark"), QTBUS_OK);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "3"), 1);
    CHECK_WAIT(atomic_load(&mark.count) == 2 && last_is(&mark, "3"), TU_WAIT_MS);
    printf("%-34s Mark crosses again\n", "import(Mark) again:");

    /* One subtype. */
    CHECK_EQ_INT(send_sub(bus_a, "Price", "EUR", "1.10"), 1);
    CHECK_WAIT(atomic_load(&price.count) == 1, TU_WAIT_MS);
    CHECK_STALE(qtbus_nats_unimport(bb, "Price")); /* only a subtype of it is imported */
    CHECK_EQ_INT(qtbus_nats_unimport_subtype(bb, "Price", "EUR"), QTBUS_OK);
    CHECK_EQ_INT(send_sub(bus_a, "Price", "EUR", "1.20"), 1);
    CHECK_EQ_INT(send_text(bus_a, "Mark", "4"), 1);
    CHECK_WAIT(atomic_load(&mark.count) == 3, TU_WAIT_MS);
    tu_sleep_ms(100);
    CHECK_EQ_INT(atomic_load(&price.count), 1);
    printf("%-34s Price/EUR no longer crosses\n", "unimport_subtype(Price, EUR):");
    CHECK_STALE(qtbus_nats_unimport_subtype(bb, "Price", "EUR"));
    CHECK_STALE(qtbus_nats_unimport_subtype(bb, "Price", "USD"));

    CHECK_EQ_INT(qtbus_nats_close(ba), QTBUS_OK);
    CHECK_EQ_INT(qtbus_nats_close(bb), QTBUS_OK);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(qtbus_token_dispose(tokens[i]), QTBUS_OK);
    CHECK_EQ_INT(atomic_load(&misuse), 0);
    ns_stop(&server);
}

int main(void)
{
    secure_begin();
    undo_case();
    secure_end("test_nats_undo");
    return 0;
}
