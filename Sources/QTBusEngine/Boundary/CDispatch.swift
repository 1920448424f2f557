// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Dispatching" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

let knownEventFlags = UInt32(QTBUS_EVENT_STICKY) | headersFlag

// A desc is read field by field, never copied whole (`desc.pointee` as a value): a
// program built against 0.2.0's header passes a desc that ends after `flags`, and the
// two fields after it are read only under QTBUS_EVENT_HEADERS (qtbus.h).

/// The checks every dispatch entry point shares: the event, its names scanned.
@inline(__always)
func outgoing(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> Outgoing {
    guard let d = desc, let typeText = d.pointee.type, let type = CName(typeText),
        d.pointee.flags & ~knownEventFlags == 0, d.pointee.data != nil || d.pointee.size == 0
    else {
        throw QTBusStatus(refuseEvent(desc))
    }
    return Outgoing(
        type: type, subtype: try scannedOptionalName(d.pointee.subtype, .subtype), data: d.pointee.data,
        size: d.pointee.size, object: d.pointee.object, objectRelease: d.pointee.object_release)
}

/// Records why `outgoing` refused `desc`.  It checks again, out of line, what
/// `outgoing`'s one combined guard found wrong: a guard per reason, each recording its
/// own, cost every dispatch more (docs/perf-notes.md, "One guard for a refused event").
/// `readsType`: false for
/// qtbus_dispatch_id, which does not read event->type.
@inline(never)
private func refuseEvent(_ desc: UnsafePointer<qtbus_event_desc>?, readsType: Bool = true) -> Int32 {
    guard let d = desc else { return failNull("the event is NULL") }
    let type = d.pointee.type
    if readsType && (type == nil || CName(type!) == nil) { return failName(type, .type) }
    let flags = d.pointee.flags
    if flags & ~knownEventFlags != 0 {
        return fail(QTBUS_EINVAL, "unknown flag bits 0x%llx in event->flags", value: UInt64(flags & ~knownEventFlags))
    }
    return fail(
        QTBUS_EINVAL, "event->data is NULL with a size of %llu", value: UInt64(UInt(bitPattern: d.pointee.size)))
}

/// As `outgoing` checks, but the type is the id's (qtbus_dispatch_id): event->type is
/// not read.  Returns the subtype, scanned.
@inline(__always)
private func checkedById(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> CName? {
    guard let d = desc, d.pointee.flags & ~knownEventFlags == 0, d.pointee.data != nil || d.pointee.size == 0 else {
        throw QTBusStatus(refuseEvent(desc, readsType: false))
    }
    return try scannedOptionalName(d.pointee.subtype, .subtype)
}

/// `outgoing`, with the UTF-8 of its names checked too: for the calls that copy the
/// event without looking it up first.
@inline(__always)
private func copiedOutgoing(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> Outgoing {
    let event = try outgoing(desc)
    try ensureUTF8(event, of: desc.unsafelyUnwrapped)
    return event
}

@inline(__always)
func ensureUTF8(_ event: Outgoing, of desc: UnsafePointer<qtbus_event_desc>) throws(QTBusStatus) {
    try ensure(event.type.isValidUTF8, else: failName(desc.pointee.type, .type))
    try ensure(event.subtype?.isValidUTF8 ?? true, else: failName(desc.pointee.subtype, .subtype))
}

/// As `outgoing` checks, but the type is only measured (`CName.measured`): its hash is
/// made only when the thread's last-dispatched type is not it (`dispatchNamed`).
@inline(__always)
private func outgoingNamed(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> (
    type: CName, subtype: CName?
) {
    guard let d = desc, let typeText = d.pointee.type, let type = CName(measuring: typeText),
        d.pointee.flags & ~knownEventFlags == 0, d.pointee.data != nil || d.pointee.size == 0
    else {
        throw QTBusStatus(refuseEvent(desc))
    }
    return (type, try scannedOptionalName(d.pointee.subtype, .subtype))
}

@_cdecl("qtbus_dispatch")
@usableFromInline package func _qtbus_dispatch(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32
{
    dispatchEntryPoint("qtbus_dispatch", bus: bus, checks: try outgoingNamed(desc)) { bus, names, record in
        let d = desc.unsafelyUnwrapped
        let flags = d.pointee.flags
        return withHeaders(d, flags: flags, record) { headers in
            var event = Outgoing(
                type: names.type, subtype: names.subtype, data: d.pointee.data, size: d.pointee.size,
                object: d.pointee.object, objectRelease: d.pointee.object_release)
            event.headers = headers
            return dispatchNamed(bus, &event, flags: flags, record)
        }
    }
}

@_cdecl("qtbus_type_lookup")
@usableFromInline package func _qtbus_type_lookup(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ out: UnsafeMutablePointer<qtbus_type_id>?
) -> Int32 {
    out?.pointee = qtbus_type_id(id: 0)
    return entryPoint(
        "qtbus_type_lookup", bus: bus,
        checks: (out: try required(out, "out is NULL"), type: try checkedName(type, .type))
    ) {
        var id: UInt64 = 0
        let status = lookupTypeId($0, $1.type, &id)
        if status == QTBUS_OK.rawValue { $1.out.pointee = qtbus_type_id(id: id) }
        return status
    }
}

@_cdecl("qtbus_dispatch_id")
@usableFromInline package func _qtbus_dispatch_id(
    _ bus: OpaquePointer?, _ type: qtbus_type_id,
    _ desc: UnsafePointer<qtbus_event_desc>?
) -> Int32 {
    dispatchEntryPoint("qtbus_dispatch_id", bus: bus, checks: try checkedById(desc)) { bus, subtype, record in
        dispatchById(bus, type.id, desc.unsafelyUnwrapped, subtype, record)
    }
}

/// qtbus_dispatch_on_bus_queue and qtbus_dispatch_on_main: the event copied, its
/// dispatch posted to the queue `queue` picks.
@inline(__always)
private func post(
    _ function: StaticString, _ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?,
    _ queue: (UnsafeMutablePointer<Bus>) -> qtshim_dispatch_queue_t, isMain: Bool
) -> Int32 {
    // In a memory section: a concurrent destroy cannot free the bus between the check
    // and the pin.
    entryPoint(function, bus: bus, .memory, checks: try copiedOutgoing(desc)) { bus, event in
        let d = desc.unsafelyUnwrapped
        let flags = d.pointee.flags
        // Inherited here, at the call, not when the queue runs the dispatch.
        return withCallHeaders(d, flags: flags) { headers in
            event.headers = headers
            return postCopy(bus, event, flags: flags, queue, isMain: isMain)
        }
    }
}

@_cdecl("qtbus_dispatch_on_bus_queue")
@usableFromInline package func _qtbus_dispatch_on_bus_queue(
    _ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?
) -> Int32 {
    post("qtbus_dispatch_on_bus_queue", bus, desc, { $0.pointee.queue }, isMain: false)
}

@_cdecl("qtbus_dispatch_on_main")
@usableFromInline package func _qtbus_dispatch_on_main(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?)
    -> Int32
{
    post("qtbus_dispatch_on_main", bus, desc, { _ in mainQueue.pointee.dq }, isMain: true)
}

private let jsonTypeName = StaticName(qtshim_json_type())

/// qtbus_dispatch_json's event: the JSON text, checked, under `name`.
@inline(__always)
private func jsonEvent(_ name: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) throws(QTBusStatus) -> Outgoing {
    let name = try checkedName(name, .name)
    let json = try required(json, "the JSON text is NULL")
    let size = strlen(json)
    try ensure(
        _isValidJSON(UnsafeRawBufferPointer(start: json, count: size)),
        else: fail(QTBUS_EJSON, "the text is not JSON (RFC 8259, nesting up to QTBUS_JSON_MAX_DEPTH)"))
    return Outgoing(type: jsonTypeName.name, subtype: name, data: json, size: size, object: nil, objectRelease: nil)
}

@_cdecl("qtbus_dispatch_json")
@usableFromInline package func _qtbus_dispatch_json(
    _ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?
) -> Int32 {
    dispatchEntryPoint("qtbus_dispatch_json", bus: bus, checks: try jsonEvent(name, json)) { bus, event, record in
        withHeaders(nil, flags: 0, record) { headers in
            event.headers = headers
            return dispatchEvent(bus, &event, flags: 0)
        }
    }
}

/// Swift-only: qtbus_dispatch_json with headers (`QTEventBus.dispatchJSON(name:json:headers:)`);
/// a C program gives headers to a JSON event through qtbus_dispatch's desc instead.  The
/// headers are checked as any dispatch's; failures are reported as qtbus_dispatch_json's.
package func _qtEngineDispatchJSON(
    _ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?,
    headers: UnsafePointer<qtbus_header>?, count: Int
) -> Int32 {
    dispatchEntryPoint("qtbus_dispatch_json", bus: bus, checks: try jsonEvent(name, json)) { bus, event, record in
        var desc = qtbus_event_desc()
        desc.flags = headersFlag
        desc.headers = headers
        desc.header_count = count
        return withHeaders(&desc, flags: headersFlag, record) { headers in
            event.headers = headers
            return dispatchEvent(bus, &event, flags: 0)
        }
    }
}

@_cdecl("qtbus_sticky_clear")
@usableFromInline package func _qtbus_sticky_clear(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ subtype: UnsafePointer<CChar>?
) -> Int32 {
    entryPoint(
        "qtbus_sticky_clear", bus: bus, .memory,
        checks: (type: try checkedName(type, .type), subtype: try checkedOptionalName(subtype, .subtype))
    ) {
        clearSticky($0, $1.type, $1.subtype)
    }
}
