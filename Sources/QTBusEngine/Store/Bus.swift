// SPDX-License-Identifier: MIT
// A bus: its type table, its serial queue for posted dispatches, and its pins (it is
// freed when the last dispatch or post that can reach it is over).  Its lists and tables
// change under the registry lock (Registry.swift).
import CQtbusShims
import CQtbusLibc

struct Bus {
    /// Registry lock: type entries made by dispatches of types nobody subscribed to
    /// (`learnType`), at most `maxLearnedTypes`.  First: it is the only field written
    /// through `pointee`, which ThreadSanitizer reports at the struct's base address
    /// (see `UnsafeMutablePointer.field`), and only lock holders touch it.
    var learnedTypes = 0
    /// Atomic, written under the registry lock: `closedBit` once qtbus_bus_destroy
    /// started (calls then return QTBUS_ECLOSED), the kinds of the trace hook (`trace`)
    /// above it, and `patternsBit`.  One word, so that a dispatch's one test of it finds a closed bus and
    /// a traced one alike (Trace.swift).
    var flags: UInt32 = 0
    /// Atomic, written under the registry lock: the TraceHook, or nil.
    var trace: UnsafeMutableRawPointer? = nil
    /// Atomic: NameTable of TypeEntry.
    var types: UnsafeMutableRawPointer? = nil
    /// Atomic: NameTable of the entries of pattern subscriptions (QTBUS_SUB_PATTERN),
    /// keyed by the pattern: apart from `types`, where the same text is a literal type.
    var patterns: UnsafeMutableRawPointer? = nil
    /// Atomic, written under the registry lock: how many pattern entries the bus has,
    /// stored after each new one is in `patternTrie` (0: the bus never had a pattern
    /// subscription).  Pattern entries live as long as the bus, so the count only
    /// grows, and says whether a type's kept answer is current (PatternDispatch.swift).
    var patternCount: UInt64 = 0
    /// Registry lock: the sequence of the newest pattern subscription, one sequence
    /// for all pattern entries, so pattern subscriptions of different patterns compare
    /// in subscription order (the delivery order, Dispatch.swift).
    var patternSeq: UInt64 = 0
    /// Atomic, grown under the registry lock: the ResolvedTypes table of type ids
    /// (TypeIds.swift), nil until the first qtbus_type_lookup.
    var resolved: UnsafeMutableRawPointer? = nil
    /// Never 0, unique per bus made: the high half of its type ids.
    let serial = qtshim_next_bus_serial()
    /// Atomic: what keeps the bus allocated, in three counts (`Bus.queuedUnit`,
    /// `Bus.waiterUnit`): the low 20 bits are pins (the bus's own, a trace note's; more
    /// would only spill into the waiters, costing a needless wake), the next 12 the
    /// qtbus_bus_wait_idle calls waiting (at most `waiterMask`: WaitIdle.swift), the
    /// high 32 the queued work in flight (queued deliveries and qtbus_dispatch_on_*
    /// posts, from their dispatch until they finished).  One word, so a delivery's one
    /// atomic each way both keeps the bus alive and tells whether a waiter must be woken
    /// (its futex is the high half: `idleWord`).  The bus is freed when the whole word
    /// reaches 0.
    var pins: UInt64 = 1
    /// Atomic: live subscriptions of QTNoSubscriberEvent, so an event nobody receives
    /// is not dispatched a second time for nobody.
    var noSubscriberListeners: UInt64 = 0
    /// Serial queue of qtbus_dispatch_on_bus_queue, so posts keep their order per bus.
    let queue: qtshim_dispatch_queue_t
    let isShared: Bool
    /// Registry lock: ids of the bus's commands and shared sources, disposed with it.
    var commands = Vector<UInt64>()
    var sources = Vector<UInt64>()
    /// Atomic, grown under the registry lock: the SubjectTrie of the pattern entries
    /// (nil until the first).  Last, so the fields a dispatch reads keep their places.
    var patternTrie: UnsafeMutableRawPointer? = nil
}

/// Never freed; its fields are atomics or guarded by the registry lock.  Made on first
/// use (qtbus_shared(), which never returns NULL): out of memory there waits for memory,
/// as libdispatch does for the bus's queue.
nonisolated(unsafe) let sharedBus: UnsafeMutablePointer<Bus> =
    makeBus(shared: true)
    ?? waitForMemory {
        makeBus(shared: true)
    }

/// nil when out of memory.
func makeBus(shared: Bool) -> UnsafeMutablePointer<Bus>? {
    qtshim_engine_used()
    guard let bus = tryAllocate(Bus.self) else { return nil }
    // Static labels: a Swift String passed as `const char *` is copied into an
    // allocation first in Embedded Swift, whose runtime traps when that fails.
    let label = shared ? cText("qtbus.shared") : cText("qtbus.bus")
    // libdispatch waits for memory itself: it never returns NULL.
    bus.initialize(to: Bus(queue: qtshim_dq_create_serial(label)!, isShared: shared))
    return bus
}

extension Bus {
    static let closedBit: UInt32 = 1
    /// In `flags` once the bus has a pattern entry (`patternCount`): its dispatches take
    /// the flagged path, so a bus without patterns pays nothing for them.
    static let patternsBit: UInt32 = 1 << 31
    /// `pins` counts: one queued piece of work in flight, one waiter.
    static let queuedUnit: UInt64 = 1 << 32
    static let waiterUnit: UInt64 = 1 << 20
    static let waiterMask: UInt64 = 0xFFF << 20
    /// A trace kind's bit in `flags`.
    @inline(__always) static func traced(_ kind: qtbus_trace_kind) -> UInt32 { kind.rawValue << 1 }
}

@inline(__always)
func isClosed(_ bus: UnsafeMutablePointer<Bus>) -> Bool {
    qtshim_atomic_load_u32(bus.field(&bus.pointee.flags)) & Bus.closedBit != 0
}

@inline(__always)
func pinBus(_ bus: UnsafeMutablePointer<Bus>) {
    _ = qtshim_atomic_fetch_add_u64(bus.field(&bus.pointee.pins), 1)
}

/// Drops a pin; the last one frees the bus.
func unpinBus(_ bus: UnsafeMutablePointer<Bus>) {
    unpinBus(bus, 1)
}

/// Queued work of `bus` starts: a delivery posted to a queue, or a dispatch posted to
/// run later.  It pins the bus until `endQueuedWork`.
/// `main`: the work goes to the main queue, which only a drain on the main thread runs;
/// it is counted twice until it is posted, and `mainWorkPosted` then drops one count,
/// so that the count moves after the post (a waiter on the main thread that read it
/// before then finds its futex changed, or is woken, and drains the new work).
@inline(__always)
func beginQueuedWork(_ bus: UnsafeMutablePointer<Bus>, main: Bool) {
    _ = qtshim_atomic_fetch_add_u64(bus.field(&bus.pointee.pins), main ? 2 * Bus.queuedUnit : Bus.queuedUnit)
}

/// After main-queue work begun with `beginQueuedWork(main: true)` was posted.
@inline(never)
func mainWorkPosted(_ bus: UnsafeMutablePointer<Bus>) {
    qtshim_tsan_release(bus)
    let left = qtshim_atomic_fetch_sub_u64(bus.field(&bus.pointee.pins), Bus.queuedUnit) &- Bus.queuedUnit
    if left == 0 {
        qtshim_tsan_acquire(bus)
        freeBus(bus)
    } else if left & Bus.waiterMask != 0 {
        qtshim_idle_wake(idleWord(bus))
    }
}

/// Queued work of `bus` finished (its handler returned, its references dropped); the
/// last one wakes the qtbus_bus_wait_idle calls waiting.
@inline(__always)
func endQueuedWork(_ bus: UnsafeMutablePointer<Bus>) {
    unpinBus(bus, Bus.queuedUnit)
}

/// The high half of `pins`: the queued work in flight, the futex word of waiters.
@inline(__always)
func idleWord(_ bus: UnsafeMutablePointer<Bus>) -> UnsafeMutablePointer<UInt32> {
    // Little-endian (x86_64, aarch64): the high half is the second 32-bit word.
    UnsafeMutableRawPointer(bus.field(&bus.pointee.pins)).assumingMemoryBound(to: UInt32.self) + 1
}

/// Drops `unit` from `pins`.  When nothing is left the bus is freed with its tables and
/// entries (every list is empty by then: destroy unlinked all subscriptions under the
/// lock); when the queued work reached 0 with waiters, they are woken.
@inline(__always)
func unpinBus(_ bus: UnsafeMutablePointer<Bus>, _ unit: UInt64) {
    qtshim_tsan_release(bus)
    let left = qtshim_atomic_fetch_sub_u64(bus.field(&bus.pointee.pins), unit) &- unit
    if left == 0 {
        qtshim_tsan_acquire(bus)
        freeBus(bus)
    } else if unit == Bus.queuedUnit && left >> 32 == 0 && left & Bus.waiterMask != 0 {
        // A waiter holds the bus; the wake may come after it left (see qtshim_idle_wake).
        qtshim_idle_wake(idleWord(bus))
    }
}

@inline(never)
private func freeBus(_ bus: UnsafeMutablePointer<Bus>) {
    NameTable<TypeEntry>.forEach(bus.pointee.types, freeTypeEntry)
    NameTable<TypeEntry>.free(bus.pointee.types)
    NameTable<TypeEntry>.forEach(bus.pointee.patterns, freeTypeEntry)
    NameTable<TypeEntry>.free(bus.pointee.patterns)
    SubjectTrie.free(bus.pointee.patternTrie)
    free(bus.pointee.resolved)
    qtshim_dq_release(bus.pointee.queue)
    bus.pointee.commands.free()
    bus.pointee.sources.free()
    bus.deinitialize(count: 1)
    free(bus)
}

let dropBusStorePin: Finalizer = { raw in
    unpinBus(raw!.assumingMemoryBound(to: Bus.self))
}
