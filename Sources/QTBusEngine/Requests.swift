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

struct Request {
    var refs: UInt64 = 1
    let onReply: qtbus_reply_handler?
    let userdata: UnsafeMutableRawPointer?
    let release: qtbus_release?
}

func makeRequest(onReply: qtbus_reply_handler?, userdata: UnsafeMutableRawPointer?,
                 release: qtbus_release?) -> UnsafeMutablePointer<Request> {
    let r = UnsafeMutablePointer<Request>.allocate(capacity: 1)
    r.initialize(to: Request(onReply: onReply, userdata: userdata, release: release))
    return r
}

@inline(__always)
func requestRetain(_ r: UnsafeMutablePointer<Request>) {
    _ = qtbus_atomic_fetch_add_u64(r.field(\.refs), 1)
}

/// Drops a reference; the last one completes the request.
func requestRelease(_ r: UnsafeMutablePointer<Request>) {
    guard qtbus_atomic_fetch_sub_u64(r.field(\.refs), 1) == 1 else { return }
    let release = r.pointee.release
    let userdata = r.pointee.userdata
    r.deinitialize(count: 1)
    r.deallocate()
    release?(userdata)
}

/// qtbus_request: dispatches `event` with a request attached.  Arguments were checked
/// by the caller (not sticky: a request completes, it cannot be kept for later).
func sendRequest(_ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing, onReply: qtbus_reply_handler?,
                 userdata: UnsafeMutableRawPointer?, release: qtbus_release?) -> Int32 {
    let request = makeRequest(onReply: onReply, userdata: userdata, release: release)
    event.request = request
    let status = withEpoch { dispatchEvent(bus, &event, flags: 0) }
    if status < 0 {
        // A failed call takes nothing: the sender still owns userdata.
        request.deinitialize(count: 1)
        request.deallocate()
        return status
    }
    requestRelease(request)
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

// MARK: - Held requests (Swift-only, not C ABI)
//
// The Swift API's subscriptions are synchronous engine subscriptions that hop to a
// DispatchQueue themselves (a DispatchQueue is not an engine queue), so the engine
// would see such a handler return before it has run, complete the request too early
// and forbid its replies.  A hop therefore holds the request as a queued delivery's
// payload does: one reference, dropped when the hop has run.  The held request is an
// EventView of its own (type and subtype copied, no data, cannot be stopped) so that
// qtbus_event_reply answers through it unchanged.

/// Inside a handler: a view that keeps `view`'s request open (one reference) until
/// `releaseHeldRequest`; nil when the event is not a request.
func holdRequest(_ view: UnsafeMutablePointer<EventView>) -> UnsafeMutablePointer<EventView>? {
    guard let request = view.pointee.request else { return nil }
    requestRetain(request)
    let type = UnsafePointer(strdup(view.pointee.type)!)
    let subtype = view.pointee.subtype.map { UnsafePointer(strdup($0)!) }
    let held = UnsafeMutablePointer<EventView>.allocate(capacity: 1)
    held.initialize(to: EventView(type: type, subtype: subtype, data: nil, size: 0, object: nil))
    held.pointee.queued = true
    held.pointee.request = request
    return held
}

/// Drops a held request's reference: the last one completes the request.
func releaseHeldRequest(_ held: UnsafeMutablePointer<EventView>) {
    let request = held.pointee.request!
    free(UnsafeMutableRawPointer(mutating: held.pointee.type))
    if let subtype = held.pointee.subtype { free(UnsafeMutableRawPointer(mutating: subtype)) }
    held.deinitialize(count: 1)
    held.deallocate()
    requestRelease(request)
}
