// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Request and reply" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

/// qtbus_request's event: as a dispatch's, but never sticky.
@inline(__always)
private func requestEvent(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> Outgoing {
    let event = try outgoing(desc)
    try ensure(
        desc.unsafelyUnwrapped.pointee.flags & stickyFlag == 0,
        else: fail(QTBUS_EINVAL, "a request cannot be sticky (QTBUS_EVENT_STICKY)"))
    return event
}

@_cdecl("qtbus_request")
@usableFromInline package func _qtbus_request(
    _ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?,
    _ onReply: qtbus_reply_handler?, _ userdata: UnsafeMutableRawPointer?,
    _ release: qtbus_release?
) -> Int32 {
    entryPoint("qtbus_request", bus: bus, checks: try requestEvent(desc)) { bus, event in
        withEpochRecord { record in
            let d = desc.unsafelyUnwrapped
            return withHeaders(d, flags: d.pointee.flags, record) { headers in
                event.headers = headers
                return sendRequest(bus, &event, onReply: onReply, userdata: userdata, release: release)
            }
        }
    }
}

@_cdecl("qtbus_event_reply")
@usableFromInline package func _qtbus_event_reply(_ event: OpaquePointer?, _ data: UnsafeRawPointer?, _ size: Int)
    -> Int32
{
    entryPoint("qtbus_event_reply", checks: try checkedEvent(event)) { replyTo($0, data, size) }
}

@_cdecl("qtbus_event_defer")
@usableFromInline package func _qtbus_event_defer(_ event: OpaquePointer?, _ out: UnsafeMutablePointer<qtbus_deferred>?)
    -> Int32
{
    out?.pointee = qtbus_deferred(id: 0)
    return entryPoint(
        "qtbus_event_defer",
        checks: (event: try checkedEvent(event), out: try required(out, "out is NULL"))
    ) {
        var id: UInt64 = 0
        let status = deferReply($0.event, &id)
        $0.out.pointee = qtbus_deferred(id: id)
        return status
    }
}

@_cdecl("qtbus_deferred_reply")
@usableFromInline package func _qtbus_deferred_reply(_ deferred: qtbus_deferred, _ data: UnsafeRawPointer?, _ size: Int)
    -> Int32
{
    entryPoint("qtbus_deferred_reply") { deferredReply(deferred.id, data, size) }
}

@_cdecl("qtbus_deferred_finish")
@usableFromInline package func _qtbus_deferred_finish(_ deferred: qtbus_deferred) -> Int32 {
    entryPoint("qtbus_deferred_finish") { finishDeferred(deferred.id) }
}
