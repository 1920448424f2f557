// SPDX-License-Identifier: MIT
// Subjects (Subjects.swift): which patterns are valid and what they match, with NATS's
// rules exactly.  The cases are nats-server's own (server/sublist_test.go:
// TestSublistValidlSubjects, TestSublistInvalidSubjectsInsert, TestSublistMatchLiterals,
// the wildcard Match tests, TestSublistTwoTokenPubMatchSingleTokenSub and
// TestSublistInsertWithWildcardsAsLiterals), as data.
import Testing
import Glibc
@testable import QTBusEngine

private func withName<R>(_ s: String, _ body: (CName) -> R) -> R {
    s.withCString { body(CName($0)!) }
}

private func valid(_ pattern: String) -> Bool {
    withName(pattern) { patternProblem($0) == nil }
}

private func matches(_ type: String, _ pattern: String) -> Bool {
    withName(pattern) { p in withName(type) { t in subjectMatches(p, t) } }
}

@Suite("Subjects")
struct SubjectsTests {
    @Test func validPatterns() {
        // TestSublistValidlSubjects ("." itself has two empty tokens).
        for p in [".", ".foo", "foo.", "foo..bar", ">.bar", "foo.>.bar", "foo.bar..baz", "a.b..d", "a.>.b"] {
            #expect(!valid(p), "\(p) is not a valid pattern")
        }
        for p in ["foo", "foo.bar.*", "foo.bar.>", "*", ">", "foo*", "foo**", "foo.**", "foo*bar", "foo.*bar",
                  "foo*.bar", "*bar", "foo>", "foo.>>", "foo>bar", "foo.>bar", "foo>.bar", ">bar",
                  "foo.*-", "foo.>-", "a.b.*.d.e.>", "*.*.*"] {
            #expect(valid(p), "\(p) is a valid pattern")
        }
    }

    @Test func matchLiterals() {
        // TestSublistMatchLiterals: (type, pattern, matches).
        let cases: [(String, String, Bool)] = [
            ("foo", "foo", true), ("foo", "bar", false), ("foo", "*", true), ("foo", ">", true),
            ("foo.bar", ">", true), ("foo.bar", "foo.>", true), ("foo.bar", "bar.>", false),
            ("stats.test.22", "stats.>", true), ("stats.test.22", "stats.*.*", true), ("foo.bar", "foo", false),
            ("stats.test.foos", "stats.test.foos", true), ("stats.test.foos", "stats.test.foo", false),
            ("stats.test", "stats.test.*", false), ("stats.test.foos", "stats.*", false),
            ("stats.test.foos", "stats.*.*.foos", false),
            // wildcard characters inside a token are literal
            ("*bar", "*bar", true), ("foo*", "foo*", true), ("foo*bar", "foo*bar", true),
            ("foo.***.bar", "foo.***.bar", true), (">bar", ">bar", true), ("foo>", "foo>", true),
            ("foo>bar", "foo>bar", true), ("foo.>>>.bar", "foo.>>>.bar", true),
        ]
        for (type, pattern, expected) in cases {
            #expect(matches(type, pattern) == expected, "\(type) against \(pattern)")
        }
    }

    @Test func wildcardMatchesOfTheSublistTests() {
        // TestSublistPartialWildcard, ...AtEnd, FullWildcard, RemoveWildcard, Cache.
        #expect(matches("a.b.c", "a.*.c"))
        #expect(matches("a.b.c", "a.b.*"))
        #expect(matches("a.b.c", "a.>"))
        #expect(matches("a.b.c.d", "a.b.*.d"))
        #expect(matches("a.b.c.d", "a.b.>"))
        // TestSublistTwoTokenPubMatchSingleTokenSub
        #expect(matches("foo", "foo"))
        #expect(!matches("foo.bar", "foo"))
        // TestSublistInsertWithWildcardsAsLiterals
        for pattern in ["foo.*-", "foo.>-"] {
            #expect(!matches("foo.bar", pattern))
            #expect(matches(pattern, pattern))
        }
        // ">" needs at least one token; "*" exactly one.
        #expect(!matches("a", "a.>"))
        #expect(!matches("a", "a.*"))
        #expect(matches("a.b", "*.*"))
        #expect(!matches("a.b.c", "*.*"))
        #expect(matches("a.b.c", ">"))
        #expect(matches("a.b.c", "*.>"))
        #expect(!matches("a", "*.>"))
    }

    @Test func typesWithEmptyTokens() {
        // Not NATS subjects, but valid qtbus types: empty tokens are tokens.
        #expect(matches("a..b", "a.*.b"))
        #expect(matches("a.", "a.*"))
        #expect(matches("a.", "a.>"))
        #expect(matches(".a", "*.a"))
        #expect(!matches("a..b", "a.b"))
    }
}
