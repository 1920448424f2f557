// SPDX-License-Identifier: MIT
// Subjects (Subjects.swift): which patterns are valid and what they match, with NATS's
// rules exactly.  The cases are nats-server's own (server/sublist_test.go:
// TestSublistValidlSubjects, TestSublistInvalidSubjectsInsert, TestSublistMatchLiterals,
// the wildcard Match tests, TestSublistTwoTokenPubMatchSingleTokenSub and
// TestSublistInsertWithWildcardsAsLiterals), as data.
import Testing
import Glibc
import CQtbusShims
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
        for p in [
            "foo", "foo.bar.*", "foo.bar.>", "*", ">", "foo*", "foo**", "foo.**", "foo*bar", "foo.*bar",
            "foo*.bar", "*bar", "foo>", "foo.>>", "foo>bar", "foo.>bar", "foo>.bar", ">bar",
            "foo.*-", "foo.>-", "a.b.*.d.e.>", "*.*.*",
        ] {
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

// MARK: - The trie (SubjectTrie.swift) against the reference, `subjectMatches`

/// A seeded generator (SplitMix64), so a failure names a case that can be run again.
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Literal tokens shared by patterns and types, so that they meet often; a few hold
/// "*" or ">" inside, which are literal characters there.
private let literals = ["a", "b", "c", "ab", "abc", "Order", "eu", "x*", ">>", "a>", "created"]

/// A token count: mostly a few, now and then many (types up to the 255-byte limit).
private func tokenCount(_ g: inout SplitMix, many: Int) -> Int {
    switch Int.random(in: 0..<20, using: &g) {
    case 0: return Int.random(in: 7...many, using: &g)
    default: return Int.random(in: 1...6, using: &g)
    }
}

/// A valid pattern: literal tokens, "*", and ">" as the last token now and then; the
/// first token seldom a wildcard (a few such patterns match most types).
private func randomPattern(_ g: inout SplitMix) -> String {
    let n = tokenCount(&g, many: 40)
    var tokens: [String] = []
    for i in 0..<n {
        let roll = i == 0 && Int.random(in: 0..<30, using: &g) != 0 ? 9 : Int.random(in: 0..<10, using: &g)
        if i == n - 1 && roll == 0 {
            tokens.append(">")
        } else if roll < 3 {
            tokens.append("*")
        } else {
            tokens.append(literals.randomElement(using: &g)!)
        }
    }
    let pattern = tokens.joined(separator: ".")
    return pattern.utf8.count <= maxNameLength ? pattern : randomPattern(&g)
}

/// A type: any name, so also empty tokens, "*" and ">" as literal tokens, and tokens
/// no pattern has.
private func randomType(_ g: inout SplitMix) -> String {
    let n = tokenCount(&g, many: 127)
    var tokens: [String] = []
    for _ in 0..<n {
        switch Int.random(in: 0..<12, using: &g) {
        case 0: tokens.append("")
        case 1: tokens.append("*")
        case 2: tokens.append(">")
        case 3: tokens.append("zz")
        default: tokens.append(literals.randomElement(using: &g)!)
        }
    }
    let type = tokens.joined(separator: ".")
    return type.isEmpty || type.utf8.count > maxNameLength ? randomType(&g) : type
}

/// A trie owned by one test, its entries the patterns' indexes (+ 1, as pointers).
private final class Trie {
    let root = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 1)
    private(set) var patterns: [String] = []
    private var known: Set<String> = []
    /// The patterns scanned once, for the reference (copies this trie frees).
    private var scanned: [CName] = []

    init() { root.initialize(to: nil) }

    deinit {
        SubjectTrie.free(root.pointee)
        root.deallocate()
        for name in scanned { free(UnsafeMutablePointer(mutating: name.bytes)) }
    }

    func insert(_ pattern: String) {
        guard known.insert(pattern).inserted else { return }  // an entry per distinct text
        let slot = withName(pattern) { SubjectTrie.slot(root, for: $0) }!
        #expect(slot.pointee == nil, "\(pattern) has a place of its own")
        slot.pointee = UnsafeMutableRawPointer(bitPattern: patterns.count + 1)
        patterns.append(pattern)
        scanned.append(CName(strdup(pattern)!)!)
    }

    /// The indexes the trie gives for `type`, in the order found.
    func matches(_ type: String) -> [Int] {
        var found: [Int] = []
        withName(type) { t in SubjectTrie.forEachMatch(root.pointee, t) { found.append(Int(bitPattern: $0) - 1) } }
        return found
    }

    /// The indexes the linear scan gives, ascending.
    func reference(_ type: String) -> [Int] {
        withName(type) { t in scanned.indices.filter { subjectMatches(scanned[$0], t) } }
    }
}

extension Engine {
    @Suite("Subjects: the pattern trie")
    struct SubjectsTrie {
        /// Types every check includes: empty tokens, a leading, trailing or lone ".",
        /// wildcard characters as literal tokens, the longest names.
        static let edgeTypes = [
            ".", "..", "a..b", "a.", ".a", "*", ">", "a.*", "a.>", "a", "Order.eu.created",
            Array(repeating: "a", count: 128).joined(separator: "."),
            Array(repeating: "", count: 256).joined(separator: "."),
            String(repeating: "a", count: 255),
        ]

        private func check(_ trie: Trie, _ type: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let found = trie.matches(type)
            #expect(Set(found).count == found.count, "\(type): an entry found twice", sourceLocation: sourceLocation)
            #expect(found.sorted() == trie.reference(type), "\(type)", sourceLocation: sourceLocation)
        }

        @Test func matchesWhatTheLinearScanMatches() {
            var g = SplitMix(state: 0x5EED_0030)
            let trie = Trie()
            // Empty: matches nothing.
            for type in Self.edgeTypes { #expect(trie.matches(type).isEmpty) }
            // Checked as it grows (the literal tables grow with it), then at 3,000 texts.
            var types: [String] = Self.edgeTypes
            for _ in 0..<4000 { types.append(randomType(&g)) }
            var checked = 0
            while trie.patterns.count < 3000 {
                trie.insert(randomPattern(&g))
                if trie.patterns.count % 500 == 0 && trie.patterns.count != checked {
                    checked = trie.patterns.count
                    for type in types.prefix(400) { check(trie, type) }
                }
            }
            var reached = 0
            var sizes: Set<Int> = []
            for type in types {
                check(trie, type)
                let n = trie.matches(type).count
                if n > 0 { reached += 1 }
                sizes.insert(n)
            }
            // The random cases are worth something: many types match, in many ways.
            #expect(reached > types.count / 10, "\(reached) of \(types.count) types matched")
            #expect(sizes.count >= 10, "answers of \(sizes.count) sizes")
        }

        @Test func matchesTheNATSCasesAsTheReferenceDoes() {
            let trie = Trie()
            for p in [
                "foo", "foo.bar.*", "foo.bar.>", "*", ">", "foo*", "foo.**", "foo.*bar", "*bar", "foo.>>",
                "foo>bar", "foo.*-", "foo.>-", "a.b.*.d.e.>", "*.*.*", "a.*.c", "a.b.*", "a.>", "a.b.*.d",
                "a.b.>", "*.>", "*.*", "stats.>", "stats.*.*", "stats.test.*", "stats.*.*.foos",
            ] {
                trie.insert(p)
            }
            for type in Self.edgeTypes + [
                "foo", "foo.bar", "foo.bar.baz", "foo.bar.baz.qux", "foo*", "foo.***",
                "foo.*-", "foo.>-", "a.b.c", "a.b.c.d", "a.b.x.d.e.f", "stats.test.22",
                "stats.test.foos", "stats.test", "*bar", "foo.>>", "foo>bar",
            ] {
                check(trie, type)
            }
        }

        /// The same on a bus: qtbus_subscriber_count and the dispatches (first the miss,
        /// then the kept answer) reach exactly the pattern subscriptions the reference
        /// says, several subscriptions sharing a pattern's entry.
        @Test func aBusReachesWhatTheReferenceSays() {
            var g = SplitMix(state: 0x5EED_0031)
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            var subscribed: [String: Int] = [:]
            var types: [String] = Self.edgeTypes
            for _ in 0..<300 { types.append(randomType(&g)) }
            for round in 0..<3 {
                for _ in 0..<100 {
                    let pattern =
                        Int.random(in: 0..<4, using: &g) == 0 && !subscribed.isEmpty
                        ? subscribed.keys.sorted().randomElement(using: &g)! : randomPattern(&g)
                    let status = pattern.withCString { p in
                        var options = qtbus_sub_options()
                        options.flags = UInt32(QTBUS_SUB_PATTERN)
                        var token = qtbus_token()
                        return _qtbus_subscribe(bus, p, &options, nopHandler, nil, nil, &token)
                    }
                    #expect(status == OK, "\(pattern)")
                    subscribed[pattern, default: 0] += 1
                }
                for type in types {
                    let expected = withName(type) { t in
                        subscribed.reduce(0) { sum, p in sum + (withName(p.key) { subjectMatches($0, t) } ? p.value : 0)
                        }
                    }
                    #expect(countSubscribers(bus, type) == Int32(expected), "round \(round): count of \(type)")
                    #expect(dispatch(bus, type) == Int32(expected), "round \(round): first dispatch of \(type)")
                    #expect(dispatch(bus, type) == Int32(expected), "round \(round): second dispatch of \(type)")
                }
            }
        }
    }
}
