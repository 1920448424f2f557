/* SPDX-License-Identifier: MIT */
/*
 * qtbus names <-> NATS subject tokens (the encoding qtbus_nats.h documents).
 *
 * A NATS token may not hold '.', '*', '>' or whitespace, and some servers and tools
 * treat other bytes specially, so only A-Z a-z 0-9 '-' go as they are; every other
 * byte is '_' and two hex digits.  '_' itself is encoded, which keeps the mapping
 * one-to-one and leaves the lone "_" free to mean "no subtype".
 */
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

size_t qn_encode(const char *name, char *out)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
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

/* <prefix>.<kinds>.<type>.<subtype, or `none` when NULL>.  Copied rather than
 * formatted: every exported event composes its subject, and snprintf cost a third of
 * the export handler (docs/perf-notes.md, "Subjects are copied, not formatted").  The prefix is at most 256 bytes and kinds one byte, so it fits. */
static void compose(char *out, const qtbus_nats *bridge, const char *kinds, const char *type, const char *subtype,
                    const char *none)
{
    size_t prefix_len = bridge->prefix_len, kinds_len = strlen(kinds);
    memcpy(out, bridge->prefix, prefix_len);
    out[prefix_len] = '.';
    memcpy(out + prefix_len + 1, kinds, kinds_len);
    size_t n = prefix_len + 1 + kinds_len;
    out[n++] = '.';
    n += qn_encode(type, out + n);
    out[n++] = '.';
    if (subtype) {
        qn_encode(subtype, out + n);
    } else {
        memcpy(out + n, none, 2);
    }
}

void qn_subject(char *out, const qtbus_nats *bridge, char kind, const char *type, const char *subtype)
{
    const char kinds[2] = { kind, '\0' };
    compose(out, bridge, kinds, type, subtype, "_");
}

void qn_pattern(char *out, const qtbus_nats *bridge, const char *kinds, const char *type, const char *subtype)
{
    compose(out, bridge, kinds, type, subtype, "*");
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decodes one token ending at '.' or NUL into out[256]; the end, or NULL when malformed
 * (`why` set). */
static const char *decode(const char *p, char *out, const char **why)
{
    size_t n = 0;
    for (; *p && *p != '.'; p++) {
        if (n == 255) { *why = "a name longer than 255 bytes"; return NULL; }
        if (plain_byte((unsigned char)*p)) {
            out[n++] = *p;
        } else if (*p == '_') {
            int hi = hex_value(p[1]), lo = hi < 0 ? -1 : hex_value(p[2]);
            int byte = hi < 0 || lo < 0 ? 0 : hi << 4 | lo;
            /* A plain byte written as _XX would make a second spelling of the name. */
            if (byte == 0 || plain_byte((unsigned char)byte)) { *why = "a bad _XX escape"; return NULL; }
            out[n++] = (char)byte;
            p += 2;
        } else {
            *why = "a byte that the encoding never writes";
            return NULL;
        }
    }
    if (n == 0) { *why = "an empty name"; return NULL; }
    out[n] = '\0';
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
            return false;  /* a continuation byte with no lead, or a lead that starts none */
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
    const char *why = NULL;
    p = decode(p + 2, out->type, &why);
    if (!p) return why;
    if (*p != '.') return "no subtype token";
    p++;
    if (p[0] == '_' && p[1] == '\0') {
        out->has_subtype = false;
        out->subtype[0] = '\0';
    } else {
        p = decode(p, out->subtype, &why);
        if (!p) return why;
        if (*p) return "more tokens than <prefix>.<kind>.<type>.<subtype>";
        out->has_subtype = true;
    }
    /* decode() made each name 1 to 255 bytes without NUL: UTF-8 is what is left. */
    if (qn_name_problem(out->type) || (out->has_subtype && qn_name_problem(out->subtype)))
        return "a name that is not UTF-8";
    return NULL;
}
