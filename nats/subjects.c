/* SPDX-License-Identifier: MIT */
/*
 * qtbus names <-> NATS subject tokens (the encoding qtbus_nats.h documents).
 *
 * A type's dot-separated tokens are the subject's last tokens, one for one, so that the
 * server's wildcards work on them as qtbus patterns do on types; the subtype, one
 * token, comes before them, where its position is fixed.  A NATS token may not hold
 * '.', '*', '>' or whitespace, and some servers and tools treat other bytes
 * specially, so only A-Z a-z 0-9 '-' go as they are; every other byte is '_' and two
 * hex digits ('.' too, in a subtype).  '_' itself is encoded, which keeps the mapping
 * one-to-one and leaves the lone "_" free to mean "no subtype" in the subtype's place
 * and an empty token (a type "a..b" is a valid name) in the type's.
 */
#define _GNU_SOURCE /* strchrnul */
#include "bridge.h"

#include <string.h>

static bool plain_byte(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

bool qn_prefix_valid(const char *prefix)
{
    size_t n = strlen(prefix);
    if (n == 0 || n > 256 || prefix[0] == '.' || prefix[n - 1] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)prefix[i];
        if (c <= ' ' || c >= 0x7f || c == '*' || c == '>') return false;
        if (c == '.' && prefix[i + 1] == '.') return false;
    }
    return true;
}

/* The encoding of the `len` bytes at `name` into out; returns its length. */
static size_t encode_bytes(const char *name, size_t len, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name, *end = p + len; p < end; p++) {
        if (plain_byte(*p)) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '_';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
    return n;
}

size_t qn_encode(const char *name, char *out) { return encode_bytes(name, strlen(name), out); }

/* The pattern rule, from here to qn_overlap: the engine's, copied (bridge.h says why). */

/* Whether the whole token [p, end) is "*" or ">". */
static bool wildcard_token(const char *p, const char *end) { return end - p == 1 && (*p == '*' || *p == '>'); }

bool qn_is_pattern(const char *type)
{
    for (const char *p = type;;) {
        const char *end = strchrnul(p, '.');
        if (wildcard_token(p, end)) return true;
        if (!*end) return false;
        p = end + 1;
    }
}

const char *qn_pattern_problem(const char *type)
{
    for (const char *p = type;;) {
        const char *end = strchrnul(p, '.');
        if (end == p) return "has an empty token";
        if (*p == '>' && end - p == 1 && *end) return "has '>' before its last token";
        if (!*end) return NULL;
        p = end + 1;
    }
}

/* The token starting at p: its end, and in *next the start of the one after it (NULL
 * when it is the last). */
static const char *token_end(const char *p, const char **next)
{
    const char *end = strchrnul(p, '.');
    *next = *end ? end + 1 : NULL;
    return end;
}

bool qn_matches(const char *pattern, const char *name)
{
    const char *p = pattern, *n = name;
    while (p && n) {
        const char *p_next, *n_next;
        const char *p_end = token_end(p, &p_next), *n_end = token_end(n, &n_next);
        if (p_end - p == 1 && *p == '>') return true; /* one or more tokens: n has one */
        if (!(p_end - p == 1 && *p == '*') && (p_end - p != n_end - n || memcmp(p, n, (size_t)(p_end - p)) != 0))
            return false;
        p = p_next;
        n = n_next;
    }
    return !p && !n;
}

bool qn_overlap(const char *a, const char *b)
{
    while (a && b) {
        const char *a_next, *b_next;
        const char *a_end = token_end(a, &a_next), *b_end = token_end(b, &b_next);
        bool a_wild = a_end - a == 1 && (*a == '*' || *a == '>'), b_wild = b_end - b == 1 && (*b == '*' || *b == '>');
        if ((a_wild && *a == '>') || (b_wild && *b == '>')) return true;
        if (!a_wild && !b_wild && (a_end - a != b_end - b || memcmp(a, b, (size_t)(a_end - a)) != 0)) return false;
        a = a_next;
        b = b_next;
    }
    return !a && !b;
}

/* A type's tokens as subject tokens, one for one: each encoded, an empty one as the lone
 * "_" (a subject token cannot be empty, and an encoded token is never "_"), and, when
 * `wildcards`, a whole "*" or ">" token kept as the server's wildcard. */
static size_t encode_type(const char *type, char *out, bool wildcards)
{
    size_t n = 0;
    for (const char *p = type;;) {
        const char *end = strchrnul(p, '.');
        size_t len = (size_t)(end - p);
        if (len == 0) {
            out[n++] = '_';
        } else if (wildcards && wildcard_token(p, end)) {
            out[n++] = *p;
        } else {
            n += encode_bytes(p, len, out + n);
        }
        if (!*end) break;
        out[n++] = '.';
        p = end + 1;
    }
    out[n] = '\0';
    return n;
}

/* <prefix>.<kinds>.<subtype, or `none` when NULL>.<type's tokens>.  Copied rather than
 * formatted: every exported event composes its subject, and snprintf cost a third of
 * the export handler (docs/perf-notes.md, "Subjects are copied, not formatted").  The
 * prefix is at most 256 bytes and kinds one byte, so it fits. */
static void compose(char *out, const qtbus_nats *bridge, const char *kinds, const char *type, const char *subtype,
                    char none, bool wildcards)
{
    size_t prefix_len = bridge->prefix_len, kinds_len = strlen(kinds);
    memcpy(out, bridge->prefix, prefix_len);
    out[prefix_len] = '.';
    memcpy(out + prefix_len + 1, kinds, kinds_len);
    size_t n = prefix_len + 1 + kinds_len;
    out[n++] = '.';
    if (subtype) {
        n += qn_encode(subtype, out + n);
    } else {
        out[n++] = none;
    }
    out[n++] = '.';
    encode_type(type, out + n, wildcards);
}

void qn_subject(char *out, const qtbus_nats *bridge, char kind, const char *type, const char *subtype)
{
    const char kinds[2] = {kind, '\0'};
    compose(out, bridge, kinds, type, subtype, '_', false);
}

void qn_pattern(char *out, const qtbus_nats *bridge, const char *kinds, const char *type, const char *subtype)
{
    compose(out, bridge, kinds, type, subtype, '*', true);
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes one token ending at '.' or NUL, appending it to out[*n..255) (`dots`: whether
 * an escaped '.' may be in it, as in a subtype and never in a type's token); the end,
 * or NULL when malformed (`why` set). */
static const char *decode(const char *p, char *out, size_t *n, bool dots, const char **why)
{
    const char *start = p;
    for (; *p && *p != '.'; p++) {
        if (*n == QN_NAME_MAX) {
            *why = "a name longer than 255 bytes";
            return NULL;
        }
        if (plain_byte((unsigned char)*p)) {
            out[(*n)++] = *p;
        } else if (*p == '_') {
            int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
            int byte = hi < 0 || lo < 0 ? 0 : hi << 4 | lo;
            /* A plain byte written as _XX would make a second spelling of the name. */
            if (byte == 0 || plain_byte((unsigned char)byte) || (byte == '.' && !dots)) {
                *why = "a bad _XX escape";
                return NULL;
            }
            out[(*n)++] = (char)byte;
            p += 2;
        } else {
            *why = "a byte that the encoding never writes";
            return NULL;
        }
    }
    if (p == start) {
        *why = "an empty token";
        return NULL;
    }
    out[*n] = '\0';
    return p;
}

/* Strict UTF-8 of `n` bytes, as the engine checks it (Unicode Table 3-7): the range of
 * a sequence's second byte depends on its lead byte, which is what refuses overlong
 * forms (C0, C1, E0 80-9F, F0 80-8F), surrogates (ED A0-BF) and scalars above U+10FFFF
 * (F4 90-BF, F5-FF); a sequence cut short by the end of the name is refused too. */
static bool utf8_valid(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = p[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t trail;
        unsigned char low = 0x80, high = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            trail = 1;
        } else if (c == 0xE0) {
            trail = 2;
            low = 0xA0;
        } else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) {
            trail = 2;
        } else if (c == 0xED) {
            trail = 2;
            high = 0x9F;
        } else if (c == 0xF0) {
            trail = 3;
            low = 0x90;
        } else if (c >= 0xF1 && c <= 0xF3) {
            trail = 3;
        } else if (c == 0xF4) {
            trail = 3;
            high = 0x8F;
        } else {
            return false; /* a continuation byte with no lead, or a lead that starts none */
        }
        if (n - i <= trail) return false;
        if (p[i + 1] < low || p[i + 1] > high) return false;
        for (size_t k = 2; k <= trail; k++) {
            if ((p[i + k] & 0xC0) != 0x80) return false;
        }
        i += trail + 1;
    }
    return true;
}

const char *qn_name_problem(const char *name)
{
    if (!name) return "is NULL";
    size_t n = strlen(name);
    if (n == 0) return "is empty";
    if (n > QN_NAME_MAX) return "is longer than 255 bytes";
    if (!utf8_valid((const unsigned char *)name, n)) return "is not valid UTF-8";
    return NULL;
}

const char *qn_parse(const char *subject, size_t prefix_len, qn_parsed *out)
{
    const char *p = subject + prefix_len + 1;
    if (strlen(subject) <= prefix_len + 1) return "no kind token";
    if ((p[0] != QN_KIND_EVENT && p[0] != QN_KIND_KEPT && p[0] != QN_KIND_REQUEST) || p[1] != '.')
        return "an unknown kind token";
    out->kind = p[0];
    p += 2;
    const char *why = NULL;
    size_t n = 0;
    if (p[0] == '_' && (p[1] == '.' || p[1] == '\0')) {
        out->has_subtype = false;
        out->subtype[0] = '\0';
        p++;
    } else {
        if (!(p = decode(p, out->subtype, &n, true, &why))) return why;
        out->has_subtype = true;
    }
    if (*p != '.') return "no type token";
    /* The type's tokens, to the end: a lone "_" is an empty one. */
    n = 0;
    for (p++;; p++) {
        if (p[0] == '_' && (p[1] == '.' || p[1] == '\0')) {
            p++;
        } else if (!(p = decode(p, out->type, &n, false, &why))) {
            return why;
        }
        if (!*p) break;
        if (n == QN_NAME_MAX) return "a name longer than 255 bytes";
        out->type[n++] = '.';
    }
    out->type[n] = '\0';
    if (n == 0) return "an empty name";
    /* decode() made each name at most 255 bytes without NUL: UTF-8 is what is left. */
    if (qn_name_problem(out->type) || (out->has_subtype && qn_name_problem(out->subtype)))
        return "a name that is not UTF-8";
    return NULL;
}
