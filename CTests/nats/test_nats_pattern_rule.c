/* SPDX-License-Identifier: MIT */
/*
 * test_nats_pattern_rule.c -- the bridge's copy of the pattern grammar and matching
 * (nats/subjects.c: qn_pattern_problem, qn_matches, qn_overlap, qn_is_pattern) says
 * what the engine's (Sources/QTBusEngine/Primitives/Subjects.swift and the trie it
 * drives at dispatch) says, over patterns and types generated from a fixed seed out of
 * tokens that sit on the grammar's edges: "*", ">", the empty token, and "*" or ">"
 * inside a longer token.
 *   - validity: qn_pattern_problem refuses exactly the patterns qtbus_subscribe with
 *     QTBUS_SUB_PATTERN refuses, for the same kind of reason (an empty token; ">"
 *     before the last token);
 *   - matching: every valid pattern is subscribed on a bus and every type dispatched;
 *     the (pattern, type) pairs whose handler ran once are those qn_matches accepts,
 *     and no handler runs twice for one dispatch;
 *   - overlap: for every pair of the first OVL valid patterns, qn_overlap is true
 *     exactly when some type reaches both on the bus: when it says yes, a witness
 *     type built from the two patterns reaches both; when it says no, no generated
 *     type reached both;
 *   - qn_is_pattern: a valid pattern it calls no pattern (the bridge subscribes it as
 *     a plain type) reaches on the bus exactly the type of its own text.
 * The engine is asked through the public C API; the bridge's functions are hidden in
 * libqtbus-nats, so this test compiles nats/subjects.c, the file the library is built
 * from, into itself (CTests/CMakeLists.txt).  No server: the rule is compared as
 * functions.  The bridge copies the rule because it is a separate library that sees
 * only qtbus.h, and it applies the same matching to NATS subjects (bridge.h says so
 * at qn_is_pattern).
 */
#include "../test_util.h"

#include "bridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPAT 2000  /* patterns generated, valid and not */
#define NTYPE 2000 /* types dispatched */
#define OVL 400    /* valid patterns whose every pair is checked for overlap */
#define MAXLEN 64

static char patterns[NPAT][MAXLEN], types[NTYPE][MAXLEN];
static int valid[NPAT]; /* indices of the valid patterns, in order */
static int nvalid;
static unsigned char engine_got[NPAT][NTYPE]; /* handler calls per (pattern, type) */
static int dispatching;                       /* the type being dispatched, or -1 */
static unsigned char witness_got[NPAT];
static unsigned char seen_both[OVL][OVL];

static uint64_t rng = 0x9E3779B97F4A7C15u;
static unsigned next_random(unsigned bound)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % bound);
}

/* `count` tokens of `alphabet` joined by "." into out. */
static void generate(char *out, const char *const *alphabet, unsigned size, unsigned count)
{
    out[0] = '\0';
    for (unsigned i = 0; i < count; i++) {
        if (i) strcat(out, ".");
        strcat(out, alphabet[next_random(size)]);
    }
}

/* The end of the token at p: the next '.' or the NUL (strchrnul is GNU's, and the
 * tests are strict C11). */
static const char *token_end(const char *p)
{
    while (*p && *p != '.')
        p++;
    return p;
}

static void on_event(const qtbus_event *event, void *userdata)
{
    (void)event;
    int p = (int)(intptr_t)userdata;
    if (dispatching >= 0) {
        if (engine_got[p][dispatching] < 255) engine_got[p][dispatching]++;
    } else if (witness_got[p] < 255) {
        witness_got[p]++;
    }
}

/* The kind of a refusal's reason, the same in the engine's words and the bridge's:
 * 1 an empty token, 2 ">" before the last token, 0 neither (or no refusal). */
static int problem_class(const char *text)
{
    if (!text) return 0;
    if (strstr(text, "has an empty token")) return 1;
    if (strstr(text, "before its last token")) return 2;
    return 0;
}

/* A type that both patterns match, given that qn_overlap says some type does: token by
 * token, a literal where either has one, "x" where both have "*", and from a ">" on the
 * other pattern's remaining tokens ("x" for its wildcards). */
static void witness(const char *a, const char *b, char *out)
{
    out[0] = '\0';
    for (;;) {
        const char *ae = token_end(a), *be = token_end(b);
        bool a_rest = ae - a == 1 && *a == '>', b_rest = be - b == 1 && *b == '>';
        if (out[0]) strcat(out, ".");
        if (a_rest || b_rest) {
            const char *r = a_rest ? b : a;
            for (bool first = true;; first = false) {
                const char *re = token_end(r);
                if (!first) strcat(out, ".");
                if (re - r == 1 && (*r == '*' || *r == '>'))
                    strcat(out, "x");
                else
                    strncat(out, r, (size_t)(re - r));
                if (!*re) return;
                r = re + 1;
            }
        }
        bool a_star = ae - a == 1 && *a == '*';
        const char *lit = a_star ? b : a, *lit_end = a_star ? be : ae;
        if (lit_end - lit == 1 && *lit == '*')
            strcat(out, "x");
        else
            strncat(out, lit, (size_t)(lit_end - lit));
        CHECK_MSG(!*ae == !*be, "qn_overlap said yes to patterns of different lengths");
        if (!*ae) return;
        a = ae + 1;
        b = be + 1;
    }
}

int main(void)
{
    static const char *const pattern_tokens[] = {"a", "b", "a", "b", "ab", "*", "*", ">", "", "a*", ">b"};
    static const char *const type_tokens[] = {"a", "b", "a", "b", "ab", "", "*", ">", "a*", ">b"};
    enum { PT = sizeof pattern_tokens / sizeof *pattern_tokens, TT = sizeof type_tokens / sizeof *type_tokens };
    /* "" is no name: the name rule refuses it before the pattern rule is asked. */
    for (int i = 0; i < NPAT; i++) {
        do
            generate(patterns[i], pattern_tokens, PT, 1 + next_random(5));
        while (patterns[i][0] == '\0');
    }
    for (int i = 0; i < NTYPE; i++) {
        do
            generate(types[i], type_tokens, TT, 1 + next_random(6));
        while (types[i][0] == '\0');
    }

    qtbus_bus *bus = qtbus_bus_create();
    CHECK(bus != NULL);

    /* 1. Validity, and the kind of reason. */
    int refused[3] = {0};
    for (int i = 0; i < NPAT; i++) {
        qtbus_sub_options o = {.flags = QTBUS_SUB_PATTERN};
        int rc = qtbus_subscribe(bus, patterns[i], &o, on_event, (void *)(intptr_t)i, NULL, NULL);
        const char *bridge = qn_pattern_problem(patterns[i]);
        CHECK_MSG((rc == QTBUS_OK) == (bridge == NULL), "pattern \"%s\": the engine %s (%s), the bridge %s",
                  patterns[i], rc == QTBUS_OK ? "accepts" : "refuses", rc == QTBUS_OK ? "" : qtbus_errmsg(),
                  bridge ? bridge : "accepts");
        if (rc == QTBUS_OK) {
            valid[nvalid++] = i;
            continue;
        }
        CHECK_EQ_INT(rc, QTBUS_EINVAL);
        int kind = problem_class(qtbus_errmsg());
        CHECK_MSG(kind != 0 && kind == problem_class(bridge),
                  "pattern \"%s\": the engine says \"%s\", the bridge \"%s\"", patterns[i], qtbus_errmsg(), bridge);
        refused[kind]++;
    }
    CHECK(nvalid >= OVL && refused[1] > 100 && refused[2] > 100);

    /* 2. Matching: each type dispatched once, every valid pattern subscribed. */
    long pairs = 0, matched = 0;
    for (int t = 0; t < NTYPE; t++) {
        dispatching = t;
        qtbus_event_desc d = {.type = types[t]};
        CHECK(qtbus_dispatch(bus, &d) >= 0);
        for (int v = 0; v < nvalid; v++) {
            int p = valid[v];
            bool bridge = qn_matches(patterns[p], types[t]);
            CHECK_MSG(engine_got[p][t] == (bridge ? 1 : 0),
                      "pattern \"%s\", type \"%s\": %d handler calls, the bridge says %s", patterns[p], types[t],
                      engine_got[p][t], bridge ? "match" : "no match");
            pairs++;
            matched += bridge;
            /* 4. A valid pattern with no wildcard token reaches its own text only. */
            if (!qn_is_pattern(patterns[p])) CHECK(bridge == (strcmp(patterns[p], types[t]) == 0));
        }
    }
    dispatching = -1;
    CHECK(matched > 10000 && pairs - matched > 10000);

    /* 3. Overlap, both ways. */
    for (int t = 0; t < NTYPE; t++) {
        for (int i = 0; i < OVL; i++) {
            if (!engine_got[valid[i]][t]) continue;
            for (int j = 0; j < OVL; j++)
                seen_both[i][j] |= engine_got[valid[j]][t];
        }
    }
    long overlap_pairs = 0, overlapping = 0;
    for (int i = 0; i < OVL; i++) {
        for (int j = 0; j < OVL; j++) {
            const char *a = patterns[valid[i]], *b = patterns[valid[j]];
            bool bridge = qn_overlap(a, b);
            overlap_pairs++;
            CHECK_MSG(!seen_both[i][j] || bridge, "\"%s\" and \"%s\": a type reaches both, qn_overlap says no", a, b);
            if (!bridge) continue;
            overlapping++;
            char w[4 * MAXLEN];
            witness(a, b, w);
            memset(witness_got, 0, sizeof witness_got);
            qtbus_event_desc d = {.type = w};
            CHECK(qtbus_dispatch(bus, &d) >= 1);
            CHECK_MSG(witness_got[valid[i]] == 1 && witness_got[valid[j]] == 1,
                      "\"%s\" and \"%s\" overlap for the bridge, but the type \"%s\" reaches %d and %d", a, b, w,
                      witness_got[valid[i]], witness_got[valid[j]]);
        }
    }
    CHECK(overlapping > 1000 && overlap_pairs - overlapping > 1000);

    CHECK_EQ_INT(qtbus_bus_destroy(bus), QTBUS_OK);
    printf("validity: %d patterns (%d valid, %d with an empty token, %d with '>' before the last)\n", NPAT, nvalid,
           refused[1], refused[2]);
    printf("matching: %ld (pattern, type) pairs, %ld matches, over %d types\n", pairs, matched, NTYPE);
    printf("overlap: %ld pairs, %ld overlapping (each with a witness type)\n", overlap_pairs, overlapping);
    printf("test_nats_pattern_rule: passed\n");
    return 0;
}
