// SPDX-License-Identifier: MIT
// A bus: its type table, its serial queue for posted dispatches, and its pins (it is
// freed when the last dispatch or post that can reach it is over).  Its lists and tables
// change under the registry lock (Registry.swift).
import CQtbusShims
import Glibc

struct Bus {
    /// Registry lock: type entries made by dispatches of types nobody subscribed to
    /// (`learnType`), at most `maxLearnedTypes`.  First: it is the only field written
    /// through `pointee`, which ThreadSanitizer reports at the struct's base address
    /// (see `UnsafeMutablePointer.field`), and only lock holders touch it.
    var learnedTypes = 0
    /// Atomic, written under the registry lock: `closedBit` once qtbus_bus_destroy
    /// started (calls then return QTBUS_ECLOSED), and the kinds of the trace hook (`trace`)
    /// above it.  One word, so that a dispatch's one test of it finds a closed bus and
    /// a traced one alike (Trace.swift).
    var flags: UInt32 = 0
    /// Atomic, written under the registry lock: the TraceHook, or nil.
    var trace: UnsafeMutableRawPointer? = nil
    /// Atomic: NameTable of TypeEntry.
    var types: UnsafeMutableRawPointer? = nil
    /// Atomic, grown under the registry lock: the ResolvedTypes table of type ids
    /// (TypeIds.swift), nil until the first qtbus_type_lookup.
    var resolved: UnsafeMutableRawPointer? = nil
    /// Never 0, unique per bus made: the high half of its type ids.
    let serial = qtshim_next_bus_serial()
    /// The bus's own pin plus one per qtbus_dispatch_on_* post in flight.
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
}

/// Never freed; its fields are atomics or guarded by the registry lock.  Made on first
/// use, as the library's other globals: out of memory there ends the process.
nonisolated(unsafe) let sharedBus: UnsafeMutablePointer<Bus> = makeBus(shared: true)!

/// nil when out of memory.
func makeBus(shared: Bool) -> UnsafeMutablePointer<Bus>? {
    qtshim_engine_used()
    guard let bus = tryAllocate(Bus.self) else { return nil }
    // libdispatch waits for memory itself: it never returns NULL.
    bus.initialize(to: Bus(queue: qtshim_dq_create_serial(shared ? "qtbus.shared" : "qtbus.bus")!, isShared: shared))
    return bus
}

extension Bus {
    static let closedBit: UInt32 = 1
    /// A trace kind's bit in `flags`.
    @inline(__always) static func traced(_ kind: qtbus_trace_kind) -> UInt32 { kind.rawValue << 1 }
}

@inline(__always)
func isClosed(_ bus: UnsafeMutablePointer<Bus>) -> Bool {
    qtshim_atomic_load_u32(bus.field(\.flags)) & Bus.closedBit != 0
}

@inline(__always)
func pinBus(_ bus: UnsafeMutablePointer<Bus>) {
    _ = qtshim_atomic_fetch_add_u64(bus.field(\.pins), 1)
}

/// Drops a pin; the last one frees the bus with its tables and entries (every list is
/// empty by then: destroy unlinked all subscriptions under the lock).
func unpinBus(_ bus: UnsafeMutablePointer<Bus>) {
    guard droppedLastReference(bus, bus.field(\.pins)) else { return }
    NameTable<TypeEntry>.forEach(bus.pointee.types, freeTypeEntry)
    NameTable<TypeEntry>.free(bus.pointee.types)
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
