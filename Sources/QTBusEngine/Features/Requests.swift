// SPDX-License-Identifier: MIT
// Requests and replies (SXMessageTransfer's "receivers return a result to the sender").
//
// A request is a dispatch with a Request record attached to every delivery of it:
// synchronous ones through the EventView, queued and backlogged ones through the
// Payload they share.  Handlers reply through the event they were given, which calls
// the sender's reply callback at once, on the replying thread.
//
// Completion is a reference count, not a counter of handlers: qtbus_request holds one
// reference for the synchronous part of the dispatch, and the payload that queued or
// backlogged deliveries share holds one more, dropped when the last of them has run.
// The count reaches zero exactly when the last handler that received the request has
// returned, or, when a handler deferred its answer (qtbus_event_defer), when the last
// deferred reply is finished; whoever drops it runs release(userdata), the sender's
// completion.
import CQtbusShims
import CQtbusLibc

/// qtbus_request: dispatches `event` with a request attached.  Arguments were checked
/// by the caller (not sticky: a request completes, it cannot be kept for later).
func sendRequest(
    _ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing, onReply: qtbus_reply_handler?,
    userdata: UnsafeMutableRawPointer?, release: qtbus_release?
) -> Int32 {
    guard let request = makeRequest(onReply: onReply, userdata: userdata, release: release) else {
        return QTBUS_ENOMEM.rawValue
    }
    event.request = request
    let status = withEpoch { dispatchEvent(bus, &event, flags: 0) }
    if status < 0 {
        // A failed call takes nothing: the sender still owns userdata.
        request.deinitialize(count: 1)
        free(request)
        return status
    }
    request.release()
    return status
}

/// qtbus_event_reply: hands `data` to the sender's reply callback, now, on this thread.
/// The reply it sees has the request's type and subtype; it cannot be stopped or
/// replied to.
func replyTo(_ view: UnsafeMutablePointer<EventView>, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    guard let request = view.pointee.request else { return fail(QTBUS_EINVAL, "the event is not a request") }
    guard data != nil || size == 0 else { return failNull("data is NULL with a size") }
    sendReply(request, type: view.pointee.type, subtype: view.pointee.subtype, data, size)
    return QTBUS_OK.rawValue
}

private func sendReply(
    _ request: UnsafeMutablePointer<Request>, type: UnsafePointer<CChar>,
    subtype: UnsafePointer<CChar>?, _ data: UnsafeRawPointer?, _ size: Int
) {
    guard let onReply = request.pointee.onReply else { return }
    var reply = EventView(type: type, subtype: subtype, data: data, size: size, object: nil)
    reply.queued = true
    // A reply carries no headers, and what its callback dispatches inherits none.
    handlingEvent(nil) {
        withUnsafeMutablePointer(to: &reply) { onReply(OpaquePointer($0), request.pointee.userdata) }
    }
}

// MARK: - Deferred replies

/// qtbus_event_defer: the request stays open until the returned id is finished.
func deferReply(_ view: UnsafeMutablePointer<EventView>, _ out: inout UInt64) -> Int32 {
    guard let request = view.pointee.request else { return fail(QTBUS_EINVAL, "the event is not a request") }
    guard let d = makeDeferredReply(request, type: view.pointee.type, subtype: view.pointee.subtype) else {
        return QTBUS_ENOMEM.rawValue
    }
    let id = withRegistry { state in state.deferred.insert(d) }
    guard id != 0 else {
        d.release()  // drops the reference it took; the handler still holds the request open
        return QTBUS_ENOMEM.rawValue
    }
    out = id
    return QTBUS_OK.rawValue
}

/// qtbus_deferred_reply: on this thread, now; the reference taken under the lock keeps
/// the names alive if another thread finishes it meanwhile.
func deferredReply(_ id: UInt64, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    guard data != nil || size == 0 else { return failNull("data is NULL with a size") }
    let found: UnsafeMutablePointer<DeferredReply>? = withRegistry { state in
        let d = state.deferred.lookup(id)
        d?.retain()
        return d
    }
    guard let d = found else { return fail(QTBUS_ESTALE, "the deferred reply is finished or was never made") }
    sendReply(d.pointee.request, type: d.pointee.type, subtype: d.pointee.subtype, data, size)
    d.release()
    return QTBUS_OK.rawValue
}

/// qtbus_deferred_finish.
func finishDeferred(_ id: UInt64) -> Int32 {
    let found = withRegistry { state in state.deferred.remove(id) }
    guard let d = found else { return fail(QTBUS_ESTALE, "the deferred reply is finished or was never made") }
    d.release()
    return QTBUS_OK.rawValue
}
