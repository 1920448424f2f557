// Type ids (qtbus_type_lookup, qtbus_dispatch_id): GLib's signal ids for this bus.  A
// dispatch by name scans the name (strlen), hashes it and finds it in the bus's table;
// an id skips all three: it is the bus's serial (high half: an id used on another bus
// is refused) and the type's index in the bus's table of resolved types.
//
// The table only grows (types stay for the bus's life), under the registry lock: a
// full one is copied into a larger one, published, and retired as memory, so a
// dispatch that loaded the old one finishes with it.  A dispatch reads it with no lock:
// the count is stored after the entry it covers, with release.
import CQtbusShims
import Glibc

/// A bus's resolved types: `count` entries (TypeEntry pointers) follow the header.
struct ResolvedTypes {
    /// Atomic: entries below it are set.
    var count: UInt64
    let capacity: UInt64

    @inline(__always)
    static func entries(_ table: UnsafeMutablePointer<ResolvedTypes>) -> UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>> {
        UnsafeMutableRawPointer(table + 1).assumingMemoryBound(to: UnsafeMutablePointer<TypeEntry>.self)
    }
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
    let old = bus.pointee.resolved?.assumingMemoryBound(to: ResolvedTypes.self)
    let count = old?.pointee.count ?? 0
    guard count < UInt64(Int32.max) else { return false }
    if let old, count < old.pointee.capacity {
        ResolvedTypes.entries(old)[Int(count)] = type
        qtshim_atomic_store_u64(old.field(\.count), count + 1)
    } else {
        let capacity = max(16, count * 2)
        guard let raw = malloc(MemoryLayout<ResolvedTypes>.stride + Int(capacity) * MemoryLayout<UnsafeMutableRawPointer>.stride)
        else { return false }
        let table = raw.bindMemory(to: ResolvedTypes.self, capacity: 1)
        table.initialize(to: ResolvedTypes(count: count + 1, capacity: capacity))
        if let old { ResolvedTypes.entries(table).initialize(from: ResolvedTypes.entries(old), count: Int(count)) }
        (ResolvedTypes.entries(table) + Int(count)).initialize(to: type)
        qtshim_atomic_store_ptr(bus.field(\.resolved), raw)
        if let old { reclaimer.retireMemory(UnsafeMutableRawPointer(old)) { free($0) } }
    }
    type.pointee.resolvedIndex = Int32(count)
    return true
}

/// The type of `id` on `bus`, or nil (the reason recorded) for an id not made by
/// qtbus_type_lookup on this bus.  Inside an epoch: the table it reads stays.
@inline(__always)
func resolvedType(_ bus: UnsafeMutablePointer<Bus>, _ id: UInt64) -> UnsafeMutablePointer<TypeEntry>? {
    let index = id & 0xFFFF_FFFF
    if let raw = qtshim_atomic_load_ptr(bus.field(\.resolved)), UInt32(truncatingIfNeeded: id >> 32) == bus.pointee.serial {
        let table = raw.assumingMemoryBound(to: ResolvedTypes.self)
        if index < qtshim_atomic_load_u64(table.field(\.count)) { return ResolvedTypes.entries(table)[Int(index)] }
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
