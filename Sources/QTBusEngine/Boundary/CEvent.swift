// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "The event a handler receives" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

@inline(__always)
private func view(_ event: OpaquePointer?) -> UnsafeMutablePointer<EventView>? {
    event.map { UnsafeMutablePointer<EventView>($0) }
}

@_cdecl("qtbus_event_type")
@usableFromInline package func _qtbus_event_type(_ event: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(event)?.pointee.type
}

@_cdecl("qtbus_event_subtype")
@usableFromInline package func _qtbus_event_subtype(_ event: OpaquePointer?) -> UnsafePointer<CChar>? {
    view(event)?.pointee.subtype
}

@_cdecl("qtbus_event_data")
@usableFromInline package func _qtbus_event_data(_ event: OpaquePointer?, _ sizeOut: UnsafeMutablePointer<Int>?)
    -> UnsafeRawPointer?
{
    guard let v = view(event) else {
        sizeOut?.pointee = 0
        return nil
    }
    sizeOut?.pointee = v.pointee.size
    return v.pointee.size > 0 ? v.pointee.data : nil
}

@_cdecl("qtbus_event_object")
@usableFromInline package func _qtbus_event_object(_ event: OpaquePointer?) -> UnsafeMutableRawPointer? {
    view(event)?.pointee.object
}

/// qtbus_event_stop's event: one whose dispatch is still running.
@inline(__always)
private func stoppable(_ event: OpaquePointer?) throws(QTBusStatus) -> UnsafeMutablePointer<EventView> {
    let v = try checkedEvent(event)
    try ensure(
        !v.pointee.queued,
        else: fail(
            QTBUS_EINVAL,
            "the event is delivered after its dispatch returned (queued or replayed): there is nothing left to stop"))
    return v
}

@_cdecl("qtbus_event_stop")
@usableFromInline package func _qtbus_event_stop(_ event: OpaquePointer?) -> Int32 {
    entryPoint("qtbus_event_stop", checks: try stoppable(event)) {
        $0.pointee.stopped = true
        return QTBUS_OK.rawValue
    }
}

@_cdecl("qtbus_event_flags")
@usableFromInline package func _qtbus_event_flags(_ event: OpaquePointer?) -> UInt32 {
    guard let v = view(event) else { return 0 }
    return (v.pointee.sticky ? stickyFlag : 0) | (v.pointee.request != nil ? requestFlag : 0)
}

@_cdecl("qtbus_event_header")
@usableFromInline package func _qtbus_event_header(_ event: OpaquePointer?, _ name: UnsafePointer<CChar>?)
    -> UnsafePointer<CChar>?
{
    guard let name, let headers = view(event)?.pointee.headers else { return nil }
    return headers.value(of: name)
}

@_cdecl("qtbus_event_header_count")
@usableFromInline package func _qtbus_event_header_count(_ event: OpaquePointer?) -> Int {
    view(event)?.pointee.headers?.pointee.count ?? 0
}

@_cdecl("qtbus_event_header_at")
@usableFromInline package func _qtbus_event_header_at(
    _ event: OpaquePointer?, _ index: Int, _ nameOut: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
    _ valueOut: UnsafeMutablePointer<UnsafePointer<CChar>?>?
) -> Int32 {
    entryPoint(
        "qtbus_event_header_at",
        checks: (
            event: try checkedEvent(event), name: try required(nameOut, "name_out is NULL"),
            value: try required(valueOut, "value_out is NULL")
        )
    ) { checked in
        let headers = checked.event.pointee.headers
        // size_t arrives as Int: above Int.max it is negative, and past the end too.
        guard let headers, index >= 0, index < headers.pointee.count else {
            return fail(
                QTBUS_EINVAL, "index %llu is past the event's last header", value: UInt64(UInt(bitPattern: index)))
        }
        let h = headers.header(at: index)
        checked.name.pointee = h.name
        checked.value.pointee = h.value
        return QTBUS_OK.rawValue
    }
}
