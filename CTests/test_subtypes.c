/* SPDX-License-Identifier: MIT */
/*
 * test_subtypes: who receives an event with or without a subtype.
 *
 * Users rely on: a subscription without subtypes receiving every event of its type
 * (with any subtype or none); a subscription naming subtypes receiving only those,
 * each event once even when it names several (or the same name twice);
 * qtbus_subscriber_count telling how many an event would reach.
 */
#include "test_util.h"

int main(void)
{
    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);

    tu_rec whole, only_a, a_and_b, dup_d, other_type;
    tu_rec_init(&whole);
    tu_rec_init(&only_a);
    tu_rec_init(&a_and_b);
    tu_rec_init(&dup_d);
    tu_rec_init(&other_type);
    qtbus_token tw, ta, tab, td, to;

    qtbus_sub_options o = tu_options();
    CHECK_EQ_INT(tu_sub_rec(bus, "T", &o, &whole, &tw), QTBUS_OK);

    const char *a[] = {"a"};
    o.subtypes = a;
    o.subtype_count = 1;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", &o, &only_a, &ta), QTBUS_OK);

    const char *ab[] = {"a", "b"};
    o.subtypes = ab;
    o.subtype_count = 2;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", &o, &a_and_b, &tab), QTBUS_OK);

    const char *dd[] = {"d", "d"};
    o.subtypes = dd;
    o.subtype_count = 2;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", &o, &dup_d, &td), QTBUS_OK);

    /* Same subtype name on another type: unrelated. */
    o.subtypes = a;
    o.subtype_count = 1;
    CHECK_EQ_INT(tu_sub_rec(bus, "U", &o, &other_type, &to), QTBUS_OK);

    /* The library copies the names: scribbling over our arrays changes nothing. */
    a[0] = "zzz";
    ab[0] = "zzz";
    ab[1] = "zzz";
    dd[0] = dd[1] = "zzz";

    /* subscriber_count: every live subscription of the type, or those a subtype reaches. */
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", NULL), 4);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "a"), 3);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "b"), 2);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "c"), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "d"), 2);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "ab"), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "U", NULL), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "U", "a"), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "U", "b"), 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "V", NULL), 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "V", "a"), 0);

    qtbus_event_desc d;

    /* No subtype: only the whole-type subscription. */
    d = tu_event("T", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(atomic_load(&whole.calls), 1);
    CHECK_EQ_INT(atomic_load(&only_a.calls), 0);
    CHECK_EQ_INT(atomic_load(&a_and_b.calls), 0);
    CHECK_EQ_INT(atomic_load(&dup_d.calls), 0);

    /* "a": whole, only_a, a_and_b -- each once. */
    d = tu_event("T", "a");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 3);
    CHECK_EQ_INT(atomic_load(&whole.calls), 2);
    CHECK_EQ_INT(atomic_load(&only_a.calls), 1);
    CHECK_EQ_INT(atomic_load(&a_and_b.calls), 1);
    CHECK_EQ_INT(atomic_load(&dup_d.calls), 0);
    CHECK_EQ_INT(atomic_load(&other_type.calls), 0);

    /* "b": whole, a_and_b. */
    d = tu_event("T", "b");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_EQ_INT(atomic_load(&whole.calls), 3);
    CHECK_EQ_INT(atomic_load(&only_a.calls), 1);
    CHECK_EQ_INT(atomic_load(&a_and_b.calls), 2);

    /* "c": nobody but whole; "ab" is not "a" nor "b" (no prefix matching). */
    d = tu_event("T", "c");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    d = tu_event("T", "ab");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(atomic_load(&whole.calls), 5);
    CHECK_EQ_INT(atomic_load(&only_a.calls), 1);
    CHECK_EQ_INT(atomic_load(&a_and_b.calls), 2);

    /* "d" listed twice: delivered once. */
    d = tu_event("T", "d");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
    CHECK_EQ_INT(atomic_load(&dup_d.calls), 1);
    CHECK_EQ_INT(atomic_load(&whole.calls), 6);

    /* The scribbled names were copied away: "zzz" reaches no subtype subscription. */
    d = tu_event("T", "zzz");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(atomic_load(&whole.calls), 7);

    /* Other type with subtype "a": only its own subscriber. */
    d = tu_event("U", "a");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 1);
    CHECK_EQ_INT(atomic_load(&other_type.calls), 1);
    CHECK_EQ_INT(atomic_load(&only_a.calls), 1);
    d = tu_event("U", NULL);
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    CHECK_EQ_INT(atomic_load(&other_type.calls), 1);

    /* Many subtypes in one subscription: each of them reaches it, once. */
    char names[40][8];
    const char *many[40];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "m%d", i);
        many[i] = names[i];
    }
    tu_rec manyrec;
    tu_rec_init(&manyrec);
    qtbus_token tm;
    o.subtypes = many;
    o.subtype_count = 40;
    CHECK_EQ_INT(tu_sub_rec(bus, "T", &o, &manyrec, &tm), QTBUS_OK);
    for (int i = 0; i < 40; i++) {
        d = tu_event("T", names[i]);
        CHECK_EQ_INT(qtbus_dispatch(bus, &d), 2);
        CHECK_EQ_INT(atomic_load(&manyrec.calls), i + 1);
    }
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", NULL), 5);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "m7"), 2);

    /* Disposing the subtype subscriptions: counts follow. */
    CHECK_EQ_INT(qtbus_token_dispose(ta), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "a"), 2);
    CHECK_EQ_INT(qtbus_token_dispose(tab), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "a"), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "b"), 1);
    CHECK_EQ_INT(qtbus_token_dispose(tw), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "a"), 0);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", "d"), 1);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", NULL), 2);
    d = tu_event("T", "a");
    CHECK_EQ_INT(qtbus_dispatch(bus, &d), 0);
    CHECK_EQ_INT(qtbus_token_dispose(td), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(to), QTBUS_OK);
    CHECK_EQ_INT(qtbus_token_dispose(tm), QTBUS_OK);
    CHECK_EQ_INT(qtbus_subscriber_count(bus, "T", NULL), 0);

    tu_rec *all[] = {&whole, &only_a, &a_and_b, &dup_d, &other_type, &manyrec};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        CHECK_REC_SANE(all[i]);
        CHECK_EQ_INT(atomic_load(&all[i]->releases), 1);
    }
    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("test_subtypes: passed\n");
    return 0;
}
