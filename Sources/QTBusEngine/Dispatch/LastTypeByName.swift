// SPDX-License-Identifier: MIT
// The last type by name: qtbus_dispatch's per-thread cache of the type it resolved last
// (the caller's name pointer, the bus's serial, the entry, in the thread's record), so
// that a thread dispatching one type again and again neither hashes its name nor probes
// the bus's table (docs/perf-notes.md, "The last type by name").
import CQtbusShims
import CQtbusLibc

/// qtbus_dispatch: `dispatchEvent` for a name measured but not hashed
/// (`CName(measuring:)`).  The thread's record keeps the type it dispatched last by
/// name: the caller's pointer, the bus's serial and the entry.  When the same pointer
/// comes again for the same bus and holds the same bytes (compared in full: the
/// pointer is only a hint, its text may have changed), the entry is the type, with no
/// hash and no table probe (docs/perf-notes.md, "The last type by name").  The entry
/// is alive: type entries live as long as their bus, serials are never reused, and
/// the caller's bus is alive.
@inline(__always)
func dispatchNamed(
    _ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing, flags: UInt32,
    _ record: UnsafeMutablePointer<ThreadRecord>
) -> Int32 {
    let text = event.type
    // As bit patterns: the optionals' == is a test for nil more (the text is never nil).
    if UInt(bitPattern: record.pointee.lastByNameText) == UInt(bitPattern: text.bytes),
        record.pointee.lastByNameBusSerial == bus.pointee.serial,
        let type = record.pointee.lastByNameType
    {
        let name = type.pointee.name
        if name.length == text.length
            && sameText(UnsafeRawPointer(name.bytes), UnsafeRawPointer(text.bytes), text.length)
        {
            // The caller's pointer stays the event's type (qtbus_event_type() returns it).
            event.type = CName(bytes: text.bytes, length: text.length, hash: name.hash)
            return dispatchResolved(bus, type, &event, flags: flags)
        }
    }
    return dispatchLookingUp(bus, &event, flags: flags, record)
}

/// `dispatchNamed` when the record's type is not the event's: hashed and looked up,
/// then kept in the record.
@inline(never)
private func dispatchLookingUp(
    _ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing, flags: UInt32,
    _ record: UnsafeMutablePointer<ThreadRecord>
) -> Int32 {
    event.type = event.type.hashed
    let type: UnsafeMutablePointer<TypeEntry>?
    do { type = try foundOrLearned(bus, event.type) } catch { return error.value }
    if let type {
        record.pointee.lastByNameText = UnsafeRawPointer(event.type.bytes)
        record.pointee.lastByNameBusSerial = bus.pointee.serial
        record.pointee.lastByNameType = type
    }
    return dispatchResolved(bus, type, &event, flags: flags)
}
