// SPDX-License-Identifier: MIT
// Subjects: event types as tokens separated by ".", and patterns over them with NATS's
// wildcards (QTBUS_SUB_PATTERN): "*" as a whole token matches exactly one token, ">" as
// the last token matches one or more.  A "*" or ">" inside a longer token is a literal
// character ("Or*" is the token "Or*").
//
// A pattern must be a valid NATS subject: no empty token (a leading, trailing or
// doubled "."), and ">" only as the last token.  An event type is never a pattern and
// may be any name; its empty tokens, if it has any, are tokens like others (NATS itself
// would refuse such a subject, so nothing crosses the bridge with one).
//
// Matching walks both names once, token by token, with no allocation: the cost grows
// with the tokens, never with the number of patterns or subscriptions (the per-type
// cache of which patterns match a type is the dispatch path's).  Which of a bus's
// patterns a type matches is found by SubjectTrie.swift, in one walk for all of them;
// `subjectMatches` is its reference (the tests compare the two) and tests one pattern
// against each type where that is the question (a REPLAY subscription's kept events).
//
// The NATS bridge, a C library over qtbus.h, has its own copy of this grammar and
// matching (nats/subjects.c; nats/bridge.h says why), which also tells whether two
// patterns overlap; CTests/nats/test_nats_pattern_rule.c compares it with this one.
import CQtbusLibc

/// The grammar's bytes: the token separator and the two wildcards (SubjectTrie.swift
/// reads them too, so that the trie and this reference cannot disagree on them).
let subjectDot = CChar(UInt8(ascii: "."))
let subjectStar = CChar(UInt8(ascii: "*"))
let subjectGreater = CChar(UInt8(ascii: ">"))

/// Whether `pattern` is a valid pattern; nil when it is, else why not.
func patternProblem(_ pattern: CName) -> StaticString? {
    var start = 0
    let bytes = pattern.bytes
    for i in 0...pattern.length {
        guard i == pattern.length || bytes[i] == subjectDot else { continue }
        if i == start { return "has an empty token (a leading, trailing or doubled \".\")" }
        if i - start == 1 && bytes[start] == subjectGreater && i != pattern.length {
            return "has \">\" before its last token (\">\" matches the rest: only as the last token)"
        }
        start = i + 1
    }
    return nil
}

/// Whether the event type `type` matches the (valid) pattern `pattern`.
func subjectMatches(_ pattern: CName, _ type: CName) -> Bool {
    let p = pattern.bytes, t = type.bytes
    var pi = 0, ti = 0
    while true {
        // The pattern's token [pi, pe), the type's [ti, te).
        var pe = pi
        while pe < pattern.length && p[pe] != subjectDot { pe += 1 }
        if ti > type.length { return false }  // the type has no token left
        var te = ti
        while te < type.length && t[te] != subjectDot { te += 1 }
        let tokenLength = pe - pi
        if tokenLength == 1 && p[pi] == subjectGreater { return true }  // the rest: at least this token
        if !(tokenLength == 1 && p[pi] == subjectStar) {
            guard te - ti == tokenLength, memcmp(p + pi, t + ti, tokenLength) == 0 else { return false }
        }
        let patternDone = pe >= pattern.length, typeDone = te >= type.length
        if patternDone || typeDone { return patternDone && typeDone }
        pi = pe + 1
        ti = te + 1
    }
}
