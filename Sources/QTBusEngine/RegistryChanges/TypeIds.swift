// SPDX-License-Identifier: MIT
// A bus's answers to "which type is this" without a name: type ids for C, and the
// handles of Swift types for the Swift API.
//
// Type ids (qtbus_type_lookup, qtbus_dispatch_id): GLib's signal ids for this bus.  A
// dispatch by name scans the name (strlen), hashes it and finds it in the bus's table;
// an id skips all three: it is the bus's serial (high half: an id used on another bus
// is refused) and the type's index in the bus's table of resolved types.
//
// Swift types: the Swift API names an event type by its metatype's address (its key),
// not by a C name.  The first dispatch of a Swift type on a bus registers it here
// (`learnSwiftType`, under the registry lock): the key, the type's TypeEntry (its
// handle: an entry lives as long as its bus), how its borrowed objects are copied and
// released, whether its events carry data, and what the Swift API keeps about the type
// (its `info`: a pointer the engine stores and hands back, never reads).  Every later
// dispatch finds them with one lookup, `swiftType`: the only type lookup of a Swift
// dispatch (SwiftAPISupport.swift).
//
// Both live in one block per bus (`bus.resolved`, freed with the bus): the header, then
// `capacity` entries by id, then `swiftMask + 1` Swift slots, an open-addressing table
// by key, at most half full.  The block only grows, under the registry lock: an entry is
// appended in place (the count stored after it, with release), a Swift slot filled in
// place (its key stored last, with release); a full block is copied into a larger one,
// published, and retired as memory, so a dispatch that loaded the old one finishes with
// it.  Readers take no lock and are inside an epoch (the block they read stays).
import CQtbusShims
import CQtbusLibc

/// A bus's resolved types: the header of the block described at the top of this file.
struct ResolvedTypes {
    /// Registry lock: the Swift slots in use (first: see `field(_:)`).
    var swiftCount: UInt64
    /// Atomic: entries below it are set.
    var count: UInt64
    let capacity: UInt64
    /// The number of Swift slots, a power of two, minus one.
    let swiftMask: UInt64

    @inline(__always)
    static func entries(_ table: UnsafeMutablePointer<ResolvedTypes>) -> UnsafeMutablePointer<
        UnsafeMutablePointer<TypeEntry>
    > {
        UnsafeMutableRawPointer(table + 1).assumingMemoryBound(to: UnsafeMutablePointer<TypeEntry>.self)
    }

    @inline(__always)
    static func swiftSlots(_ table: UnsafeMutablePointer<ResolvedTypes>) -> UnsafeMutablePointer<SwiftTypeSlot> {
        UnsafeMutableRawPointer(entries(table) + Int(table.pointee.capacity)).assumingMemoryBound(
            to: SwiftTypeSlot.self)
    }

    static func byteCount(capacity: UInt64, swiftSlots: UInt64) -> Int {
        MemoryLayout<ResolvedTypes>.stride + Int(capacity) * MemoryLayout<UnsafeMutableRawPointer>.stride
            + Int(swiftSlots) * MemoryLayout<SwiftTypeSlot>.stride
    }
}

/// One Swift event type on a bus.  A free slot has only its key set (0).
struct SwiftTypeSlot {
    // All `var`: a new slot's fields are initialized one by one through their
    // addresses (`field`), the key last, and only a `var` has an address.
    /// Atomic: the metatype's address, 0 for a free slot; stored last, with release.
    var key: UInt64
    var entry: UnsafeMutablePointer<TypeEntry>
    /// The Swift API's, opaque here.
    var info: UnsafeRawPointer
    /// How a dispatch's borrowed object (a cell holding a value of this type) is copied
    /// and released.
    var borrowed: BorrowedObject
    /// Its events carry data the Swift API makes for each dispatch (a bytes event): the
    /// dispatch asks for them (`_qtEngineDispatchSwift`'s `bytes`).
    var withData: Bool
}

/// Under the registry lock: the key of `slot`, which may be free.
@inline(__always)
private func keyOf(_ slot: UnsafeMutablePointer<SwiftTypeSlot>) -> UInt64 {
    slot.field(&slot.pointee.key).pointee
}

/// Where a probe for `key` starts. Metatype addresses are 8-aligned: mix the rest.
@inline(__always)
private func swiftHash(_ key: UInt64) -> UInt64 {
    ((key >> 3) &* 0x9e37_79b9_7f4a_7c15) >> 29
}

/// qtbus_type_lookup: the id of `name` on `bus`, the type made if the bus has none.
func lookupTypeId(_ bus: UnsafeMutablePointer<Bus>, _ name: CName, _ out: inout UInt64) -> Int32 {
    withRegistry { _, _ in
        if isClosed(bus) { return failClosed() }
        guard let type = typeEntry(bus, name) else { return QTBUS_ENOMEM.rawValue }
        if type.pointee.resolvedIndex < 0 && !appendResolved(bus, type) { return QTBUS_ENOMEM.rawValue }
        out = UInt64(bus.pointee.serial) << 32 | UInt64(type.pointee.resolvedIndex)
        return QTBUS_OK.rawValue
    }
}

/// Under the registry lock: gives `type` the next index; false when out of memory.
private func appendResolved(_ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>) -> Bool {
    let count = currentTable(bus)?.pointee.count ?? 0
    guard count < UInt64(Int32.max), let table = tableWithRoom(bus, entry: true) else { return false }
    ResolvedTypes.entries(table)[Int(count)] = type
    qtshim_atomic_store_u64(table.field(&table.pointee.count), count + 1)
    type.pointee.resolvedIndex = Int32(count)
    return true
}

/// The type of `id` on `bus`, or nil (the reason recorded) for an id not made by
/// qtbus_type_lookup on this bus.  Inside an epoch: the table it reads stays.
@inline(__always)
func resolvedType(_ bus: UnsafeMutablePointer<Bus>, _ id: UInt64) -> UnsafeMutablePointer<TypeEntry>? {
    let index = id & 0xFFFF_FFFF
    if let raw = qtshim_atomic_load_ptr(bus.field(&bus.pointee.resolved)),
        UInt32(truncatingIfNeeded: id >> 32) == bus.pointee.serial
    {
        let table = raw.assumingMemoryBound(to: ResolvedTypes.self)
        if index < qtshim_atomic_load_u64(table.field(&table.pointee.count)) {
            return ResolvedTypes.entries(table)[Int(index)]
        }
    }
    return nil
}

/// Why `id` was refused.
@inline(never)
func failTypeId(_ bus: UnsafeMutablePointer<Bus>, _ id: UInt64) -> Int32 {
    if id == 0 { return fail(QTBUS_EINVAL, "the type id is 0 (none)") }
    if UInt32(truncatingIfNeeded: id >> 32) != bus.pointee.serial {
        return fail(QTBUS_EINVAL, "the type id 0x%llx was made by another bus (or a destroyed one)", value: id)
    }
    return fail(QTBUS_EINVAL, "the type id 0x%llx was never made by qtbus_type_lookup", value: id)
}

// MARK: - Swift types

/// The slot of the Swift type `key` on `bus`, or nil when it was not registered.  Inside
/// an epoch: the slot is read in the block it was found in, which stays.
@inline(__always)
func swiftType(_ bus: UnsafeMutablePointer<Bus>, _ key: UInt64) -> UnsafeMutablePointer<SwiftTypeSlot>? {
    guard let raw = qtshim_atomic_load_ptr(bus.field(&bus.pointee.resolved)) else { return nil }
    let table = raw.assumingMemoryBound(to: ResolvedTypes.self)
    let mask = table.pointee.swiftMask
    let slots = ResolvedTypes.swiftSlots(table)
    var i = swiftHash(key) & mask
    while true {
        let slot = slots + Int(i)
        let found = qtshim_atomic_load_u64(slot.field(&slot.pointee.key))
        if found == key { return slot }
        if found == 0 { return nil }
        i = (i &+ 1) & mask
    }
}

/// Registers the Swift type `key`, named `name`, on `bus`, with the rest of `slot`, if it
/// is not yet; returns its entry, nil when the bus is closed or out of memory.  A key
/// registered already keeps what it was first registered with.
func learnSwiftType(
    _ bus: UnsafeMutablePointer<Bus>, _ key: UInt64, _ name: CName, info: UnsafeRawPointer,
    borrowed: BorrowedObject, withData: Bool
) -> UnsafeMutablePointer<TypeEntry>? {
    withRegistry { _, _ in
        if isClosed(bus) { return nil }
        if let slot = swiftType(bus, key) { return slot.pointee.entry }
        guard let type = typeEntry(bus, name), let table = tableWithRoom(bus, entry: false) else { return nil }
        // The key last: a dispatch that finds it finds the rest.
        let slot = freeSlot(table, key)
        slot.field(&slot.pointee.entry).initialize(to: type)
        slot.field(&slot.pointee.info).initialize(to: info)
        slot.field(&slot.pointee.borrowed).initialize(to: borrowed)
        slot.field(&slot.pointee.withData).initialize(to: withData)
        qtshim_atomic_store_u64(slot.field(&slot.pointee.key), key)
        table.field(&table.pointee.swiftCount).pointee += 1
        return type
    }
}

/// The free slot where `key` goes in `table` (which has room).
private func freeSlot(_ table: UnsafeMutablePointer<ResolvedTypes>, _ key: UInt64) -> UnsafeMutablePointer<
    SwiftTypeSlot
> {
    let slots = ResolvedTypes.swiftSlots(table)
    var i = swiftHash(key) & table.pointee.swiftMask
    while keyOf(slots + Int(i)) != 0 { i = (i &+ 1) & table.pointee.swiftMask }
    return slots + Int(i)
}

// MARK: - The block

/// Under the registry lock: the bus's block.
@inline(__always)
private func currentTable(_ bus: UnsafeMutablePointer<Bus>) -> UnsafeMutablePointer<ResolvedTypes>? {
    bus.pointee.resolved?.assumingMemoryBound(to: ResolvedTypes.self)
}

/// Under the registry lock: the bus's block with room for one more entry (`entry`) or
/// one more Swift slot, made or grown (copied, published, the old one retired) if it
/// has none; nil when out of memory.
private func tableWithRoom(_ bus: UnsafeMutablePointer<Bus>, entry: Bool) -> UnsafeMutablePointer<ResolvedTypes>? {
    let old = currentTable(bus)
    var capacity = old?.pointee.capacity ?? 16
    var swiftSlots = (old?.pointee.swiftMask ?? 15) + 1
    if let old {
        let full = entry ? old.pointee.count == capacity : 2 * (old.pointee.swiftCount + 1) > swiftSlots
        if !full { return old }
        if entry { capacity *= 2 } else { swiftSlots *= 2 }
    }
    guard let raw = malloc(ResolvedTypes.byteCount(capacity: capacity, swiftSlots: swiftSlots)) else { return nil }
    let table = raw.bindMemory(to: ResolvedTypes.self, capacity: 1)
    table.initialize(
        to: ResolvedTypes(
            swiftCount: old?.pointee.swiftCount ?? 0, count: old?.pointee.count ?? 0,
            capacity: capacity, swiftMask: swiftSlots - 1))
    let slots = ResolvedTypes.swiftSlots(table)
    for i in 0..<Int(swiftSlots) {
        let slot = slots + i
        slot.field(&slot.pointee.key).initialize(to: 0)
    }
    if let old {
        ResolvedTypes.entries(table).initialize(from: ResolvedTypes.entries(old), count: Int(old.pointee.count))
        let oldSlots = ResolvedTypes.swiftSlots(old)
        for i in 0...Int(old.pointee.swiftMask) where keyOf(oldSlots + i) != 0 {
            freeSlot(table, keyOf(oldSlots + i)).initialize(to: oldSlots[i])
        }
    }
    qtshim_atomic_store_ptr(bus.field(&bus.pointee.resolved), raw)
    if let old { reclaimer.retireMemory(UnsafeMutableRawPointer(old)) { free($0) } }
    return table
}
