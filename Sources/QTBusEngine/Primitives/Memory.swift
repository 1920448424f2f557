// SPDX-License-Identifier: MIT
// The engine's allocations, what happens when one fails, and how a reference-counted
// block knows its last reference went (`droppedLastReference`).
//
// Two kinds, chosen by where the call stands:
// - Before a call has changed anything or run a callback, an allocation may fail:
//   `tryAllocate` returns nil and the call unwinds and returns QTBUS_ENOMEM (or NULL).
// - Past that point (a dispatch that already reached a handler, a dispose, a release,
//   a queued delivery of an accepted event), failing would lose an event or a release,
//   so `allocateWaiting` waits for memory and retries, as libdispatch does for its own
//   continuations.
// Swift's `allocate(capacity:)`, growing Swift arrays, `sort` (scratch above 20 values)
// and `withUnsafeTemporaryAllocation` above 1 KB (`withScratch`) are not used: the
// runtime ends the process when they fail.  Everything here is malloc'd and freed with
// `free`.
import CQtbusShims
import CQtbusLibc

/// malloc'd storage for `capacity` values (uninitialised), or nil when out of memory.
@inline(__always)
func tryAllocate<T>(_: T.Type, capacity: Int = 1) -> UnsafeMutablePointer<T>? {
    // glibc's malloc returns 16-aligned blocks on every 64-bit target.
    assert(MemoryLayout<T>.alignment <= 16)
    return malloc(Swift.max(1, capacity) * MemoryLayout<T>.stride)?.bindMemory(to: T.self, capacity: capacity)
}

/// Runs `body` with room for `capacity` values (uninitialised) for its length: on the
/// stack up to 1 KB, else malloc'd.  `withUnsafeTemporaryAllocation` alone is not
/// enough: above 1 KB (the standard library's limit, in every mode) it takes the Swift
/// allocator, which ends the process when out of memory.  nil, without calling `body`,
/// when the malloc fails, unless `waiting`: it then waits for memory (`allocateWaiting`).
@inline(__always)
func withScratch<T, R>(_: T.Type, capacity: Int, waiting: Bool, _ body: (UnsafeMutablePointer<T>) -> R) -> R? {
    let capacity = Swift.max(1, capacity)
    let onStack = capacity <= 1024 / MemoryLayout<T>.stride
    return withUnsafeTemporaryAllocation(of: T.self, capacity: onStack ? capacity : 1) { stack in
        if onStack { return body(stack.baseAddress.unsafelyUnwrapped) }
        let heap = waiting ? allocateWaiting(T.self, capacity: capacity) : tryAllocate(T.self, capacity: capacity)
        guard let heap else { return nil }
        defer { free(heap) }
        return body(heap)
    }
}

/// Storage for `capacity` values; waits for memory instead of failing.
func allocateWaiting<T>(_: T.Type, capacity: Int = 1) -> UnsafeMutablePointer<T> {
    if let p = tryAllocate(T.self, capacity: capacity) { return p }
    return waitForMemory { tryAllocate(T.self, capacity: capacity) }
}

/// Retries `attempt` with a growing pause (1 ms to 100 ms) until it succeeds.
@inline(never)
func waitForMemory<R>(_ attempt: () -> R?) -> R {
    var pause: UInt32 = 1000
    while true {
        usleep(pause)
        if let r = attempt() { return r }
        pause = Swift.min(pause * 2, 100_000)
    }
}

/// Drops one of the references `refs` counts for `object`: true for the last one, whose
/// holder then frees it.  ThreadSanitizer is told of the hand-over (the atomic alone is
/// not an acquire it follows).
@inline(__always)
func droppedLastReference<T>(_ object: UnsafeMutablePointer<T>, _ refs: UnsafeMutablePointer<UInt64>) -> Bool {
    qtshim_tsan_release(object)
    guard qtshim_atomic_fetch_sub_u64(refs, 1) == 1 else { return false }
    qtshim_tsan_acquire(object)
    return true
}

/// A growable array of trivial values (pointers, ids) in malloc'd storage, whose growth
/// can fail (`tryAppend`) or wait (`append`).  A value type with manual ownership, like
/// the records that hold it: copying it aliases the storage, and its owner calls
/// `free()`.
struct Vector<Element> {
    private(set) var base: UnsafeMutablePointer<Element>? = nil
    private(set) var count = 0
    private var capacity = 0

    var isEmpty: Bool { count == 0 }

    subscript(i: Int) -> Element {
        get { base![i] }
        set { base![i] = newValue }
    }

    /// Makes room for `extra` more values; false (and nothing changed) when out of memory.
    mutating func reserve(_ extra: Int) -> Bool {
        let needed = count + extra
        if needed <= capacity { return true }
        let newCapacity = Swift.max(8, Swift.max(needed, capacity * 2))
        guard let grown = realloc(base, newCapacity * MemoryLayout<Element>.stride) else { return false }
        base = grown.bindMemory(to: Element.self, capacity: newCapacity)
        capacity = newCapacity
        return true
    }

    /// Appends; false (and nothing changed) when out of memory.
    @discardableResult
    mutating func tryAppend(_ value: Element) -> Bool {
        guard reserve(1) else { return false }
        (base! + count).initialize(to: value)
        count += 1
        return true
    }

    /// Appends into room reserved earlier.
    mutating func appendReserved(_ value: Element) {
        precondition(count < capacity)
        (base! + count).initialize(to: value)
        count += 1
    }

    /// Appends, waiting for memory if need be.
    mutating func append(_ value: Element) {
        if !reserve(1) { waitForMemory { reserve(1) ? () : nil } }
        appendReserved(value)
    }

    mutating func removeFirst() -> Element {
        let first = base!.move()
        base!.moveInitialize(from: base! + 1, count: count - 1)
        count -= 1
        return first
    }

    /// Keeps the values for which `keep` is true, in order.
    mutating func retain(where keep: (Element) -> Bool) {
        var kept = 0
        for i in 0..<count where keep(base![i]) {
            base![kept] = base![i]
            kept += 1
        }
        count = kept
    }

    /// Removes the first value for which `match` is true, keeping the order of the
    /// rest; false when there is none.
    @discardableResult
    mutating func removeFirst(where match: (Element) -> Bool) -> Bool {
        for i in 0..<count where match(base![i]) {
            _ = (base! + i).move()
            (base! + i).moveInitialize(from: base! + i + 1, count: count - i - 1)
            count -= 1
            return true
        }
        return false
    }

    func forEach(_ body: (Element) -> Void) {
        for i in 0..<count { body(base![i]) }
    }

    /// Empties the vector and frees its storage.
    mutating func free() {
        CQtbusLibc.free(base)
        base = nil
        count = 0
        capacity = 0
    }
}

/// A Finalizer (Reclamation.swift) for a block that is only memory: frees it.
let freeRaw: @convention(c) (UnsafeMutableRawPointer?) -> Void = { raw in free(raw) }
