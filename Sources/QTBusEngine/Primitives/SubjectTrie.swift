// SPDX-License-Identifier: MIT
// A token trie of patterns (Subjects.swift's), as nats-server's sublist keeps its
// subscriptions: which patterns match a type is found by walking the type's tokens,
// not by testing every pattern, so its cost grows with the type's tokens and the
// patterns that share its prefixes, not with the number of patterns
// (docs/perf-notes.md, "Patterns in a token trie").
//
// A node stands for a prefix of tokens.  It holds the node of each literal token that
// follows (a NameTable keyed by the token), the node of a "*" token, the entry of the
// pattern that ends at it and the entry of the pattern that is it followed by ">".
// The trie holds entries as opaque pointers (the bus's pattern entries: one per
// distinct pattern text, so at most one per place).
//
// Concurrency: the trie only grows.  Nodes and entries are never removed until the
// whole trie is freed with its bus, so a writer (under the registry lock) only adds:
// a new node is complete before a release store publishes it (into a NameTable, or
// the "*" field), and an entry's field goes from nil to the entry once.  A reader
// walks without a lock, with acquire loads, and sees a trie that holds at least every
// entry published before it started; a NameTable that grows is retired through the
// reclaimer, as every NameTable is.  Nothing a reader can reach is ever changed in
// place, so no node needs to be copied or retired.
import CQtbusShims
import CQtbusLibc

/// A node of a SubjectTrie: one allocation, the node then its token's bytes.
struct SubjectNode: NamedEntry {
    /// The token that leads here from its parent (the root's is empty); its bytes are
    /// the node's own, after it.
    let name: StoredName
    /// Atomic: NameTable of the literal tokens' nodes, nil until the first.
    var children: UnsafeMutableRawPointer? = nil
    /// Atomic: the node of a "*" token, or nil.
    var star: UnsafeMutableRawPointer? = nil
    /// Atomic: the entry of the pattern that ends here, or nil.
    var here: UnsafeMutableRawPointer? = nil
    /// Atomic: the entry of the pattern that is this prefix followed by ">", or nil.
    var rest: UnsafeMutableRawPointer? = nil
}

extension StoredName {
    /// A name whose bytes someone else owns (a trie node's, in its allocation).
    fileprivate init(borrowing bytes: UnsafeMutablePointer<CChar>, length: Int, hash: UInt64) {
        self.bytes = bytes
        self.length = length
        self.hash = hash
    }
}

enum SubjectTrie {
    private typealias Node = UnsafeMutablePointer<SubjectNode>

    /// Calls `body` with the entry of every pattern in the trie at `root` that `type`
    /// matches (what `subjectMatches` says), each once, in no particular order.
    /// Reader-safe: inside a section of the reclaimer, or under the writers' lock.
    static func forEachMatch(
        _ root: UnsafeMutableRawPointer?, _ type: CName,
        _ body: (UnsafeMutableRawPointer) -> Void
    ) {
        guard let root else { return }
        walk(root.assumingMemoryBound(to: SubjectNode.self), type.bytes, 0, type.length, body)
    }

    /// Matches the tokens of `t` from `from` (a token starts there: the type has one
    /// more) below `start`.  Recursive only for a "*" child, as nats-server's
    /// matchLevel, so its depth is at most the type's tokens.
    private static func walk(
        _ start: Node, _ t: UnsafePointer<CChar>, _ from: Int, _ length: Int,
        _ body: (UnsafeMutableRawPointer) -> Void
    ) {
        var node = start
        var ti = from
        while true {
            let te = tokenEnd(t, ti, length)
            let last = te >= length
            // ">" takes this token and any after it.
            if let rest = qtshim_atomic_load_ptr(node.field(&node.pointee.rest)) { body(rest) }
            if let s = qtshim_atomic_load_ptr(node.field(&node.pointee.star)) {
                let starNode = s.assumingMemoryBound(to: SubjectNode.self)
                if last {
                    if let here = qtshim_atomic_load_ptr(starNode.field(&starNode.pointee.here)) { body(here) }
                } else {
                    walk(starNode, t, te + 1, length, body)
                }
            }
            // An empty token (a type may have one) has no literal node: patterns have none.
            guard te > ti, let table = qtshim_atomic_load_ptr(node.field(&node.pointee.children)) else { return }
            let token = CName(bytes: t + ti, length: te - ti, hash: hashBytes(UnsafeRawPointer(t + ti), te - ti))
            guard let child = NameTable<SubjectNode>.lookup(table, token) else { return }
            if last {
                if let here = qtshim_atomic_load_ptr(child.field(&child.pointee.here)) { body(here) }
                return
            }
            node = child
            ti = te + 1
        }
    }

    /// The end of the token that starts at `i`: the next "." or `length`.
    @inline(__always)
    private static func tokenEnd(_ s: UnsafePointer<CChar>, _ i: Int, _ length: Int) -> Int {
        var e = i
        while e < length && s[e] != subjectDot { e += 1 }
        return e
    }

    /// The field that holds the entry of `pattern` (valid: Subjects.swift's
    /// `patternProblem`) in the trie at `root`, its nodes made if missing; the caller
    /// stores the entry there (a release store) once it may be found.  nil when out of
    /// memory: nodes made before it stay, empty (they match nothing), and are freed
    /// with the trie.  Writers only, under their lock.
    static func slot(
        _ root: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
        for pattern: CName
    ) -> UnsafeMutablePointer<UnsafeMutableRawPointer?>? {
        if root.pointee == nil {
            guard let made = makeNode(pattern.bytes, 0) else { return nil }
            qtshim_atomic_store_ptr(root, UnsafeMutableRawPointer(made))
        }
        var node = root.pointee!.assumingMemoryBound(to: SubjectNode.self)
        let p = pattern.bytes
        var pi = 0
        while true {
            let pe = tokenEnd(p, pi, pattern.length)
            let length = pe - pi
            if length == 1 && p[pi] == subjectGreater { return node.field(&node.pointee.rest) }  // the last token
            let child: Node
            if length == 1 && p[pi] == subjectStar {
                if let s = node.pointee.star {
                    child = s.assumingMemoryBound(to: SubjectNode.self)
                } else {
                    guard let made = makeNode(p + pi, 0) else { return nil }
                    qtshim_atomic_store_ptr(node.field(&node.pointee.star), UnsafeMutableRawPointer(made))
                    child = made
                }
            } else {
                let token = CName(bytes: p + pi, length: length, hash: hashBytes(UnsafeRawPointer(p + pi), length))
                if let found = NameTable<SubjectNode>.lookup(node.pointee.children, token) {
                    child = found
                } else {
                    guard let made = makeNode(p + pi, length) else { return nil }
                    guard NameTable<SubjectNode>.insert(node.field(&node.pointee.children), made) else {
                        CQtbusLibc.free(made)
                        return nil
                    }
                    child = made
                }
            }
            if pe >= pattern.length { return child.field(&child.pointee.here) }
            node = child
            pi = pe + 1
        }
    }

    /// A node for the token of `length` bytes at `token`, unpublished; nil when out of
    /// memory.
    private static func makeNode(_ token: UnsafePointer<CChar>, _ length: Int) -> Node? {
        guard let raw = malloc(MemoryLayout<SubjectNode>.stride + length + 1) else { return nil }
        let bytes = (raw + MemoryLayout<SubjectNode>.stride).bindMemory(to: CChar.self, capacity: length + 1)
        bytes.initialize(from: token, count: length)
        bytes[length] = 0
        let hash = length == 0 ? 0 : hashBytes(UnsafeRawPointer(token), length)
        let node = raw.bindMemory(to: SubjectNode.self, capacity: 1)
        node.initialize(to: SubjectNode(name: StoredName(borrowing: bytes, length: length, hash: hash)))
        return node
    }

    /// Frees the trie at `root`, its nodes and tables (not its entries).  Only when no
    /// reader can hold it.
    static func free(_ root: UnsafeMutableRawPointer?) {
        guard let root else { return }
        let node = root.assumingMemoryBound(to: SubjectNode.self)
        NameTable<SubjectNode>.forEach(node.pointee.children) { free(UnsafeMutableRawPointer($0)) }
        NameTable<SubjectNode>.free(node.pointee.children)
        free(node.pointee.star)
        node.deinitialize(count: 1)
        CQtbusLibc.free(root)
    }
}
