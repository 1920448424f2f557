/* SPDX-License-Identifier: MIT */
/*
 * test_status_strings: qtbus_strerror and qtbus_version.
 *
 * Users print qtbus_strerror(rc) for any rc, including values they made up or that a
 * newer library returns, so it must never return NULL; every known code has its own
 * text, taken from the header's one table.  qtbus_version() tells which library was
 * loaded and must match the header the program was compiled with; QTBUS_CHECK_VERSION
 * compares the header's version with a given one.
 */
#include "test_util.h"

#include <limits.h>

typedef struct known_status {
    const char *name;
    int value;
    const char *text;
} known_status;

static const known_status known[] = {
#define KNOWN(name, value, text) {#name, value, text},
    QTBUS_STATUS_MAP(KNOWN)
#undef KNOWN
};
#define KNOWN_COUNT ((int)(sizeof known / sizeof known[0]))

int main(void)
{
    int checked = 0;

    /* The enum is the contract's table. */
    CHECK_EQ_INT(QTBUS_OK, 0);
    CHECK_EQ_INT(QTBUS_EINVAL, -1);
    CHECK_EQ_INT(QTBUS_ESTALE, -2);
    CHECK_EQ_INT(QTBUS_EJSON, -3);
    CHECK_EQ_INT(QTBUS_ENOMEM, -4);
    CHECK_EQ_INT(QTBUS_ECLOSED, -5);
    CHECK_EQ_INT(QTBUS_EBUSY, -6);
    CHECK_EQ_INT(QTBUS_EIO, -7);
    CHECK_EQ_INT(QTBUS_ETIMEDOUT, -8);
    CHECK_EQ_INT(QTBUS_EACCES, -9);
    CHECK_EQ_INT(KNOWN_COUNT, 10);

    /* Every known code: its table text, non-empty, distinct from every other code's. */
    for (int i = 0; i < KNOWN_COUNT; i++) {
        const char *s = qtbus_strerror(known[i].value);
        CHECK_MSG(s != NULL, "qtbus_strerror(%d) is NULL", known[i].value);
        CHECK(s[0] != '\0');
        CHECK_EQ_STR(s, known[i].text);
        /* Static text: asking again gives the same text. */
        CHECK_EQ_STR(qtbus_strerror(known[i].value), s);
        for (int j = 0; j < i; j++) {
            CHECK_MSG(strcmp(s, qtbus_strerror(known[j].value)) != 0, "QTBUS_%s and QTBUS_%s share the text \"%s\"",
                      known[i].name, known[j].name, s);
        }
        checked++;
    }

    /* Unknown ints (future codes, positive counts, extremes): never NULL, never empty,
     * never mistaken for a known code. */
    const int unknown[] = {QTBUS__STATUS_LAST, -11, -100, -1000, 1, 2, 7, 42, 1000, INT_MIN, INT_MIN + 1, INT_MAX};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        const char *s = qtbus_strerror(unknown[i]);
        CHECK_MSG(s != NULL, "qtbus_strerror(%d) is NULL", unknown[i]);
        CHECK(s[0] != '\0');
        for (int j = 0; j < KNOWN_COUNT; j++) {
            CHECK_MSG(strcmp(s, known[j].text) != 0, "qtbus_strerror(%d) gives the text of QTBUS_%s", unknown[i],
                      known[j].name);
        }
        checked++;
    }

    /* Version: the library matches the header, and the macros agree with each other. */
    const char *v = qtbus_version();
    CHECK(v != NULL);
    CHECK_EQ_STR(v, QTBUS_VERSION_STRING);
    CHECK(v == qtbus_version() || strcmp(v, qtbus_version()) == 0);
    char expect[64];
    snprintf(expect, sizeof expect, "%d.%d.%d", QTBUS_VERSION_MAJOR, QTBUS_VERSION_MINOR, QTBUS_VERSION_PATCH);
    CHECK_EQ_STR(QTBUS_VERSION_STRING, expect);
    CHECK_EQ_INT(QTBUS_VERSION_NUMBER, QTBUS_VERSION_MAJOR * 10000 + QTBUS_VERSION_MINOR * 100 + QTBUS_VERSION_PATCH);
    checked++;

    /* QTBUS_CHECK_VERSION: this version and older ones pass, newer ones do not, in
     * expressions and in #if alike. */
#if !QTBUS_CHECK_VERSION(0, 0, 0) || QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR + 1, 0, 0)
#error "QTBUS_CHECK_VERSION is wrong in #if"
#endif
    CHECK(QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR, QTBUS_VERSION_MINOR, QTBUS_VERSION_PATCH));
    CHECK(QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR, QTBUS_VERSION_MINOR, 0));
    CHECK(QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR, 0, 0));
    CHECK(QTBUS_CHECK_VERSION(0, 0, 9) || QTBUS_VERSION_NUMBER < 9);
    if (QTBUS_VERSION_MINOR > 0) CHECK(QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR, QTBUS_VERSION_MINOR - 1, 99));
    CHECK(!QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR, QTBUS_VERSION_MINOR, QTBUS_VERSION_PATCH + 1));
    CHECK(!QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR, QTBUS_VERSION_MINOR + 1, 0));
    CHECK(!QTBUS_CHECK_VERSION(QTBUS_VERSION_MAJOR + 1, 0, 0));
    checked++;

    CHECK_EQ_INT(checked, KNOWN_COUNT + 12 + 2);
    printf("test_status_strings: %d checks passed\n", checked);
    return 0;
}
