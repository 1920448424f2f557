// SPDX-License-Identifier: MIT
// The dispatch of a bus that has pattern subscriptions (QTBUS_SUB_PATTERN): which
// pattern entries an event's type reaches, and a walk that merges their lists with the
// type's own in delivery order.
//
// Which patterns a type reaches is matched once per type and pattern list
// (Subjects.swift does the matching) and kept on the type's entry: a dispatch of a type
// already seen pays one load and one compare for it.  The list of pattern entries only
// grows (an entry lives as long as its bus), so its length says whether a kept answer
// is current.  A type without an entry of its own (one of the types the bus would not
// learn, Registry.swift) is matched on every dispatch.
//
// Delivery order (qtbus.h, QTBUS_SUB_PATTERN): priority first; at equal priority the
// type's subtype list, then its whole list, then every pattern subscription, these in
// subscription order, which one sequence for all patterns makes comparable
// (Bus.patternSeq).
import CQtbusShims
import Glibc

/// A list the walk takes nodes from, each list already in delivery order.
private struct Cursor {
    var node: UnsafeMutableRawPointer?
    /// 0: the event's subtype's list, 1: its type's whole list, 2: a pattern's list.
    let rank: Int
    /// The largest `order` a node may have to receive this dispatch (ListNode.order).
    let last: UInt64
}

/// Delivers `event` to the subscriptions of `type` (nil: none) and `specific` and to
/// the pattern subscriptions it reaches; returns how many were reached, or nil when no
/// pattern matches its type (the plain walk then delivers it).  `start`: the type's
/// sequence when the dispatch started.  Inline only as far as the answer "no pattern":
/// a type no pattern reaches (most types, on a bus with a few patterns) costs a few
/// loads here and no call.
@inline(__always)
func deliverWithPatterns(_ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
                         _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing, _ start: UInt64,
                         instrumented: Bool) -> Int32? {
    if let type, let kept = currentMatches(bus, type), kept.pointee.count == 0 { return nil }
    return deliverReachingPatterns(bus, type, specific, &event, start, instrumented: instrumented)
}

/// `type`'s kept answer, if it is current.
@inline(__always)
private func currentMatches(_ bus: UnsafeMutablePointer<Bus>,
                            _ type: UnsafeMutablePointer<TypeEntry>) -> UnsafeMutablePointer<PatternMatches>? {
    guard let raw = qtshim_atomic_load_ptr(type.field(\.matches)) else { return nil }
    let kept = raw.assumingMemoryBound(to: PatternMatches.self)
    let list = qtshim_atomic_load_ptr(bus.field(\.patternList))!.assumingMemoryBound(to: PatternList.self)
    return kept.pointee.listCount == list.pointee.count ? kept : nil
}

/// `deliverWithPatterns` past its inline part: with the type's current answer, or a new
/// one.
@inline(never)
private func deliverReachingPatterns(_ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
                                     _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing,
                                     _ start: UInt64, instrumented: Bool) -> Int32? {
    if let type, let kept = currentMatches(bus, type) {
        return deliverMatched(bus, kept.entries, kept.pointee.count, type, specific, &event, start,
                              instrumented: instrumented)
    }
    return matchAndDeliver(bus, type, specific, &event, start, instrumented: instrumented)
}

/// `deliverWithPatterns` once the pattern entries the type reaches are known.
private func deliverMatched(_ bus: UnsafeMutablePointer<Bus>, _ matches: UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>>,
                            _ matchCount: Int, _ type: UnsafeMutablePointer<TypeEntry>?,
                            _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing, _ start: UInt64,
                            instrumented: Bool) -> Int32 {
    withUnsafeTemporaryAllocation(of: Cursor.self, capacity: 2 + 2 * matchCount) { buffer in
        let cursors = buffer.baseAddress!
        var n = 0
        func add(_ head: UnsafeMutableRawPointer?, _ rank: Int, _ last: UInt64) {
            guard let head else { return }
            (cursors + n).initialize(to: Cursor(node: head, rank: rank, last: last))
            n += 1
        }
        if let type {
            qtshim_tsan_acquire(type)
            let last = start << 16 | ListNode.indexMask
            if let specific { add(qtshim_atomic_load_ptr(specific.field(\.list.head)), 0, last) }
            add(qtshim_atomic_load_ptr(type.field(\.whole.head)), 1, last)
        }
        for i in 0..<matchCount {
            let pattern = matches[i]
            // Read before the lists, as `start` is (Dispatch.swift).
            let last = (qtshim_atomic_load_u64(pattern.field(\.seq)) & ~TypeEntry.hasOwned) << 16 | ListNode.indexMask
            qtshim_tsan_acquire(pattern)
            if let subtype = event.subtype,
               let entry = NameTable<SubtypeEntry>.lookup(qtshim_atomic_load_ptr(pattern.field(\.subtypes)), subtype) {
                add(qtshim_atomic_load_ptr(entry.field(\.list.head)), 2, last)
            }
            add(qtshim_atomic_load_ptr(pattern.field(\.whole.head)), 2, last)
        }
        defer { cursors.deinitialize(count: n) }
        return walk(bus, cursors, n, &event, instrumented: instrumented)
    }
}

/// Takes the next node in delivery order from the cursors until they are empty or a
/// handler stops the event.
private func walk(_ bus: UnsafeMutablePointer<Bus>, _ cursors: UnsafeMutablePointer<Cursor>, _ n: Int,
                  _ event: inout Outgoing, instrumented: Bool) -> Int32 {
    let tracing = instrumented ? deliverTracer(bus) : nil
    var view = EventView(type: event.type.bytes, subtype: event.subtype?.bytes, data: event.data, size: event.size,
                         object: event.object)
    view.request = event.request
    if let p = event.payload, p.pointee.sticky { view.sticky = true }
    var count: Int32 = 0
    withUnsafeMutablePointer(to: &view) { view in
        while true {
            var best = -1
            for i in 0..<n {
                guard let raw = cursors[i].node else { continue }
                if best < 0 || comesFirst(raw.assumingMemoryBound(to: ListNode.self), cursors[i].rank,
                                          cursors[best].node!.assumingMemoryBound(to: ListNode.self), cursors[best].rank) {
                    best = i
                }
            }
            guard best >= 0 else { return }
            let node = cursors[best].node!.assumingMemoryBound(to: ListNode.self)
            if visit(node, view, &event, cursors[best].last, &count, instrumented, tracing) { return }
            cursors[best].node = qtshim_atomic_load_ptr(node.field(\.next))
        }
    }
    return count
}

/// Whether node `a` (of a list of rank `rankA`) is delivered before node `b`.
@inline(__always)
private func comesFirst(_ a: UnsafeMutablePointer<ListNode>, _ rankA: Int,
                        _ b: UnsafeMutablePointer<ListNode>, _ rankB: Int) -> Bool {
    let pa = Subscription.of(a).pointee.priority, pb = Subscription.of(b).pointee.priority
    if pa != pb { return pa > pb }
    if rankA != rankB { return rankA < rankB }
    return a.pointee.order < b.pointee.order
}

// MARK: - Which patterns a type reaches

/// `deliverWithPatterns` when the type has no current answer: matches its name against
/// every pattern entry of `list`, once, keeps the answer on its entry (if it has one),
/// and delivers.
@inline(never)
private func matchAndDeliver(_ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
                             _ specific: UnsafeMutablePointer<SubtypeEntry>?, _ event: inout Outgoing, _ start: UInt64,
                             instrumented: Bool) -> Int32? {
    let list = qtshim_atomic_load_ptr(bus.field(\.patternList))!.assumingMemoryBound(to: PatternList.self)
    return withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<TypeEntry>.self, capacity: list.pointee.count) { buffer in
        let found = buffer.baseAddress!
        var n = 0
        for i in 0..<list.pointee.count where subjectMatches(list.entries[i].pointee.name.cName, event.type) {
            found[n] = list.entries[i]
            n += 1
        }
        if let type { keepMatches(found, n, listCount: list.pointee.count, on: type) }
        guard n > 0 else { return nil }
        return deliverMatched(bus, found, n, type, specific, &event, start, instrumented: instrumented)
    }
}

/// Keeps `count` matching pattern entries, found among the first `listCount` of the
/// pattern list, as `type`'s answer, unless another dispatch kept one for the same or a
/// newer list meanwhile (or there is no memory: the next dispatch matches again).
private func keepMatches(_ found: UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>>, _ count: Int,
                         listCount: Int, on type: UnsafeMutablePointer<TypeEntry>) {
    let size = MemoryLayout<PatternMatches>.stride + count * MemoryLayout<UnsafeMutablePointer<TypeEntry>>.stride
    guard let raw = malloc(size) else { return }
    let made = raw.bindMemory(to: PatternMatches.self, capacity: 1)
    made.initialize(to: PatternMatches(listCount: listCount, count: count))
    made.entries.initialize(from: found, count: count)
    let slot = type.field(\.matches)
    var old = qtshim_atomic_load_ptr(slot)
    while true {
        if let o = old, o.assumingMemoryBound(to: PatternMatches.self).pointee.listCount >= listCount {
            free(raw)
            return
        }
        if qtshim_atomic_cas_ptr(slot, &old, raw) {
            // Other dispatches may be reading the answer it replaces.
            if let old { reclaimer.retireMemory(old, freeRaw) }
            return
        }
    }
}
