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
// returned; whoever drops it runs release(userdata), the sender's completion.
import CQtbusShims
import Glibc

/// qtbus_request: dispatches `event` with a request attached.  Arguments were checked
/// by the caller (not sticky: a request completes, it cannot be kept for later).
func sendRequest(_ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing, onReply: qtbus_reply_handler?,
                 userdata: UnsafeMutableRawPointer?, release: qtbus_release?) -> Int32 {
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
    guard let request = view.pointee.request, data != nil || size == 0 else { return QTBUS_EINVAL.rawValue }
    guard let onReply = request.pointee.onReply else { return QTBUS_OK.rawValue }
    var reply = EventView(type: view.pointee.type, subtype: view.pointee.subtype, data: data, size: size, object: nil)
    reply.queued = true
    withUnsafeMutablePointer(to: &reply) { onReply(OpaquePointer($0), request.pointee.userdata) }
    return QTBUS_OK.rawValue
}
