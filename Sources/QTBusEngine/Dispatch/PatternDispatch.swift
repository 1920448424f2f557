// SPDX-License-Identifier: MIT
// The dispatch of a bus that has pattern subscriptions (QTBUS_SUB_PATTERN): which
// pattern entries an event's type reaches, and a walk that merges their lists with the
// type's own in delivery order.
//
// Which patterns a type reaches is found once per type and set of pattern entries, by
// walking the type's tokens down the bus's trie of patterns (SubjectTrie.swift), and
// kept on the type's entry: a dispatch of a type already seen pays one load and one
// compare for it.  The pattern entries only grow (an entry lives as long as its bus),
// so their count says whether a kept answer is current.  A type without an entry of
// its own (one of the types the bus would not learn, Registry.swift) is matched on
// every dispatch.
//
// Delivery order (qtbus.h, QTBUS_SUB_PATTERN): priority first; at equal priority the
// type's subtype list, then its whole list, then every pattern subscription, these in
// subscription order, which one sequence for all patterns makes comparable
// (Bus.patternSeq).
import CQtbusShims
import CQtbusLibc

/// A list the walk takes nodes from, each list already in delivery order, with the
/// delivery key of its current node kept beside it: the walk compares keys, not nodes,
/// so choosing the next node reads no node but the one taken (docs/perf-notes.md, "The
/// pattern walk keeps its lists sorted").  A node's priority and order never change
/// while a dispatch can see it, so a key read once stays right.
private struct Cursor {
    var node: UnsafeMutablePointer<ListNode>
    /// The node's priority, mapped so that the highest is the smallest (high bits), and
    /// the list's rank (low 2 bits; 0: the event's subtype's list, 1: its type's whole
    /// list, 2: a pattern's list).
    var major: UInt64
    /// The node's ListNode.order.
    var order: UInt64
    /// The largest `order` a node may have to receive this dispatch (ListNode.order).
    let last: UInt64

    init(_ node: UnsafeMutablePointer<ListNode>, rank: UInt64, last: UInt64) {
        self.node = node
        major = Cursor.priorityKey(node) << 2 | rank
        order = node.pointee.order
        self.last = last
    }

    /// Int32.max -> 0 ... Int32.min -> UInt32.max: the sign bit kept (negatives after
    /// the others), the rest flipped (higher first).
    @inline(__always)
    private static func priorityKey(_ node: UnsafeMutablePointer<ListNode>) -> UInt64 {
        UInt64(UInt32(bitPattern: Subscription.of(node).pointee.priority) ^ 0x7FFF_FFFF)
    }

    /// Moves to `next`, a node of the same list.
    @inline(__always)
    mutating func take(_ next: UnsafeMutablePointer<ListNode>) {
        node = next
        major = Cursor.priorityKey(next) << 2 | major & 3
        order = next.pointee.order
    }

    /// Whether this cursor's node is delivered before `other`'s (qtbus.h's order: priority,
    /// then rank, then subscription order).  No two nodes of a dispatch share a key: each
    /// is another subscription's, and the orders of one rank come from one sequence.
    @inline(__always)
    func comesFirst(_ other: Cursor) -> Bool {
        major != other.major ? major < other.major : order < other.order
    }
}

/// Delivers `event` to the subscriptions of `type` (nil: none) and `specific` and to
/// the pattern subscriptions it reaches; returns how many were reached, or nil when no
/// pattern matches its type (the plain walk then delivers it).  `start`: the type's
/// sequence when the dispatch started.  Inline only as far as the answer "no pattern":
/// a type no pattern reaches (most types, on a bus with a few patterns) costs a few
/// loads here and no call.
///
/// Out of memory (more matches or lists than the stack room of `withScratch`, and no
/// malloc): QTBUS_ENOMEM, before any delivery, so the dispatch fails with nothing done;
/// an accepted event (`Outgoing.accepted`: a sticky one already kept, a posted one)
/// cannot fail, and waits for memory instead (qtbus.h, "Out of memory").
@inline(__always)
func deliverWithPatterns(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
    _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing, _ start: UInt64,
    instrumented: Bool
) -> Int32? {
    if let type, let kept = currentMatches(bus, type), kept.pointee.count == 0 { return nil }
    return deliverReachingPatterns(bus, type, specific, &event, start, instrumented: instrumented)
}

/// `type`'s kept answer, if it is current.
@inline(__always)
private func currentMatches(
    _ bus: UnsafeMutablePointer<Bus>,
    _ type: UnsafeMutablePointer<TypeEntry>
) -> UnsafeMutablePointer<PatternMatches>? {
    guard let raw = qtshim_atomic_load_ptr(type.field(&type.pointee.patterns.matches)) else { return nil }
    let kept = raw.assumingMemoryBound(to: PatternMatches.self)
    return kept.pointee.patternCount == qtshim_atomic_load_u64(bus.field(&bus.pointee.patternCount)) ? kept : nil
}

/// `deliverWithPatterns` past its inline part: with the type's current answer, or a new
/// one.
@inline(never)
private func deliverReachingPatterns(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
    _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing,
    _ start: UInt64, instrumented: Bool
) -> Int32? {
    if let type, let kept = currentMatches(bus, type) {
        return deliverMatched(
            bus, kept.entries, kept.pointee.count, type, specific, &event, start,
            instrumented: instrumented)
    }
    return matchAndDeliver(bus, type, specific, &event, start, instrumented: instrumented)
}

/// `deliverWithPatterns` once the pattern entries the type reaches are known
/// (QTBUS_ENOMEM: nothing delivered).
private func deliverMatched(
    _ bus: UnsafeMutablePointer<Bus>, _ matches: UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>>,
    _ matchCount: Int, _ type: UnsafeMutablePointer<TypeEntry>?,
    _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing, _ start: UInt64,
    instrumented: Bool
) -> Int32 {
    // Each entry's whole list, and with a subtype its subtype's list too.
    let perEntry = event.subtype == nil ? 1 : 2
    let delivered = withScratch(Cursor.self, capacity: perEntry * (1 + matchCount), waiting: event.accepted) {
        cursors in
        var n = 0
        // Kept sorted as they come (a few lists: an insertion sort), empty lists left out.
        func add(_ head: UnsafeMutableRawPointer?, _ rank: UInt64, _ last: UInt64) {
            guard let head else { return }
            let cursor = Cursor(head.assumingMemoryBound(to: ListNode.self), rank: rank, last: last)
            var i = n
            while i > 0 && cursor.comesFirst(cursors[i - 1]) {
                (cursors + i).moveInitialize(from: cursors + i - 1, count: 1)
                i -= 1
            }
            (cursors + i).initialize(to: cursor)
            n += 1
        }
        if let type {
            qtshim_tsan_acquire(type)
            let last = start << 16 | ListNode.indexMask
            if let specific { add(qtshim_atomic_load_ptr(specific.field(&specific.pointee.list.head)), 0, last) }
            add(qtshim_atomic_load_ptr(type.field(&type.pointee.whole.head)), 1, last)
        }
        for i in 0..<matchCount {
            let pattern = matches[i]
            // Read before the lists, as `start` is (Dispatch.swift).
            let last =
                (qtshim_atomic_load_u64(pattern.field(&pattern.pointee.seq)) & ~TypeEntry.hasOwned) << 16
                | ListNode.indexMask
            qtshim_tsan_acquire(pattern)
            if let subtype = event.subtype,
                let entry = NameTable<SubtypeEntry>.lookup(
                    qtshim_atomic_load_ptr(pattern.field(&pattern.pointee.subtypes)), subtype)
            {
                add(qtshim_atomic_load_ptr(entry.field(&entry.pointee.list.head)), 2, last)
            }
            add(qtshim_atomic_load_ptr(pattern.field(&pattern.pointee.whole.head)), 2, last)
        }
        defer { cursors.deinitialize(count: n) }
        let count = walk(bus, cursors, n, &event, instrumented: instrumented)
        // Swift freeWith subscriptions on the patterns are asked as the type's own are
        // (Owners.swift): those not reached, whatever their subtypes, after the walk.
        for i in 0..<matchCount {
            let pattern = matches[i]
            let seq = qtshim_atomic_load_u64(pattern.field(&pattern.pointee.seq))
            guard seq & TypeEntry.hasOwned != 0 else { continue }
            let entry = event.subtype.flatMap {
                NameTable<SubtypeEntry>.lookup(qtshim_atomic_load_ptr(pattern.field(&pattern.pointee.subtypes)), $0)
            }
            sweepOwners(pattern, entry, (seq & ~TypeEntry.hasOwned) << 16 | ListNode.indexMask, stopped: event.stopped)
        }
        return count
    }
    return delivered ?? QTBUS_ENOMEM.rawValue
}

/// Takes the next node in delivery order from the `n` cursors, sorted by their keys,
/// until they are empty or a handler stops the event.
private func walk(
    _ bus: UnsafeMutablePointer<Bus>, _ cursors: UnsafeMutablePointer<Cursor>, _ n: Int,
    _ event: inout Outgoing, instrumented: Bool
) -> Int32 {
    let tracing = instrumented ? deliverTracer(bus) : nil
    var view = EventView(event)
    var count: Int32 = 0
    withUnsafeMutablePointer(to: &view) { view in
        // cursors[first..<n] are the lists with nodes left, the next to deliver first.
        var first = 0
        while n - first > 1 {
            let node = cursors[first].node
            if visit(node, view, &event, cursors[first].last, &count, instrumented, tracing) { return }
            // Read after the visit, as the plain walk does (Dispatch.swift, `visit`).
            guard let next = qtshim_atomic_load_ptr(node.field(&node.pointee.next)) else {
                first += 1
                continue
            }
            var moved = cursors[first]
            moved.take(next.assumingMemoryBound(to: ListNode.self))
            // Back in its place among the others.  A list's next node often still comes
            // first (one test); else a binary search, as lists that take turns send it
            // far back.
            var i = first
            if cursors[first + 1].comesFirst(moved) {
                var lo = first + 2, hi = n
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if cursors[mid].comesFirst(moved) { lo = mid + 1 } else { hi = mid }
                }
                i = lo - 1
                (cursors + first).update(from: cursors + first + 1, count: i - first)
            }
            cursors[i] = moved
        }
        // One list left: no more to compare.
        guard first < n else { return }
        let last = cursors[first].last
        var raw: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(cursors[first].node)
        while let r = raw {
            let node = r.assumingMemoryBound(to: ListNode.self)
            if visit(node, view, &event, last, &count, instrumented, tracing) { return }
            raw = qtshim_atomic_load_ptr(node.field(&node.pointee.next))
        }
    }
    return count
}

// MARK: - Which patterns a type reaches

/// `deliverWithPatterns` when the type has no current answer: finds the pattern entries
/// its name matches, once, keeps the answer on its entry (if it has one), and delivers.
@inline(never)
private func matchAndDeliver(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
    _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing, _ start: UInt64,
    instrumented: Bool
) -> Int32? {
    // Before the walk: the trie then holds at least the entries this many stand for
    // (Registry.swift, patternEntry), so the answer is kept as current for it.  It may
    // hold a newer one too, a match all the same; the answer is then made again.
    let patternCount = qtshim_atomic_load_u64(bus.field(&bus.pointee.patternCount))
    let trie = qtshim_atomic_load_ptr(bus.field(&bus.pointee.patternTrie))
    // Room for the matches of most types; a type that matches more walks again with
    // room for all it found (a pattern added meanwhile: for them and a few more).
    var capacity = 32
    while true {
        // nil: no memory for the matches; .some(.none): more room needed.
        let outcome: Int32??? = withScratch(
            UnsafeMutablePointer<TypeEntry>.self, capacity: capacity,
            waiting: event.accepted
        ) { found in
            var n = 0
            SubjectTrie.forEachMatch(trie, event.type) { entry in
                if n < capacity { found[n] = entry.assumingMemoryBound(to: TypeEntry.self) }
                n += 1
            }
            guard n <= capacity else {
                capacity = n + 8
                return .none
            }
            // In the order the entries were made, as the pattern subscriptions' first
            // nodes mostly are: `deliverMatched` sorts its lists as they come, and
            // this keeps that sort short (docs/perf-notes.md, "Patterns in a token trie").
            if n > 1 { sortByPatternIndex(found, n) }
            if let type { keepMatches(found, n, patternCount: patternCount, on: type) }
            guard n > 0 else { return .some(nil) }
            return .some(deliverMatched(bus, found, n, type, specific, &event, start, instrumented: instrumented))
        }
        guard let outcome else { return QTBUS_ENOMEM.rawValue }
        if let delivered = outcome { return delivered }
    }
}

/// Sorts the `n` entries at `e` by `patterns.index` (each entry has its own), in place
/// and allocating nothing (the standard library's sort takes scratch memory above 20
/// values, which Embedded Swift cannot fail): an insertion sort for up to 20, as the
/// standard library's, else a heap sort.
private func sortByPatternIndex(_ e: UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>>, _ n: Int) {
    if n <= 20 {
        for i in 1..<n {
            let moving = e[i]
            let key = moving.pointee.patterns.index
            var j = i
            while j > 0 && e[j - 1].pointee.patterns.index > key {
                e[j] = e[j - 1]
                j -= 1
            }
            e[j] = moving
        }
        return
    }
    // A heap of the largest first, its top moved behind it each round.
    var i = n / 2
    while i > 0 {
        i -= 1
        siftDown(e, i, n)
    }
    var end = n
    while end > 1 {
        end -= 1
        let top = e[0]
        e[0] = e[end]
        e[end] = top
        siftDown(e, 0, end)
    }
}

/// Moves `e[root]` down the heap `e[0..<end]` until its children are not larger.
private func siftDown(_ e: UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>>, _ root: Int, _ end: Int) {
    let moving = e[root]
    let key = moving.pointee.patterns.index
    var parent = root
    while true {
        var child = 2 * parent + 1
        guard child < end else { break }
        if child + 1 < end && e[child + 1].pointee.patterns.index > e[child].pointee.patterns.index { child += 1 }
        guard e[child].pointee.patterns.index > key else { break }
        e[parent] = e[child]
        parent = child
    }
    e[parent] = moving
}

/// Keeps `count` matching pattern entries, found when the bus had `patternCount`, as
/// `type`'s answer, unless another dispatch kept one for the same or a larger count
/// meanwhile (or there is no memory: the next dispatch matches again).
private func keepMatches(
    _ found: UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>>, _ count: Int,
    patternCount: UInt64, on type: UnsafeMutablePointer<TypeEntry>
) {
    let size = MemoryLayout<PatternMatches>.stride + count * MemoryLayout<UnsafeMutablePointer<TypeEntry>>.stride
    guard let raw = malloc(size) else { return }
    let made = raw.bindMemory(to: PatternMatches.self, capacity: 1)
    made.initialize(to: PatternMatches(patternCount: patternCount, count: count))
    made.entries.initialize(from: found, count: count)
    let slot = type.field(&type.pointee.patterns.matches)
    var old = qtshim_atomic_load_ptr(slot)
    while true {
        if let o = old, o.assumingMemoryBound(to: PatternMatches.self).pointee.patternCount >= patternCount {
            free(raw)
            return
        }
        if qtshim_atomic_cas_ptr(slot, &old, raw) {
            // Other dispatches may be reading the answer it replaces.
            if let old { reclaimer.retireMemory(old, freeRaw) }
            return
        }
        // A failed exchange reads the slot relaxed: read the answer another dispatch
        // kept again, with acquire, before reading its count.
        old = qtshim_atomic_load_ptr(slot)
    }
}
