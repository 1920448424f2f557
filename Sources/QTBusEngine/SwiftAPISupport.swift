// Swift-only dispatch of a borrowed object (not C ABI: no @_cdecl, so nothing here is
// exported from libqtbus.so; the Swift API links the engine module directly).
//
// A typed Swift dispatch carries its value as the event's object.  Giving the engine
// ownership of it (qtbus_dispatch's object + object_release) means a malloc and a free
// per dispatch, the largest cost of a synchronous dispatch to one closure (about 160 of
// 700 instructions).  Here the object stays on the caller's stack: the engine only
// borrows it for the call, and when a delivery must outlive the call (a queued
// subscription, a sticky keep, a replay backlog: every such path goes through
// `Outgoing.ensurePayload`) it asks the caller for a heap copy with `copy`, owns that
// copy like any object passed to qtbus_dispatch and releases it with `release` after
// its last delivery.  Deliveries made during the call may see either the borrowed
// object or the copy; both hold the same value.
import CQtbusShims
import Glibc

/// How a borrowed object is copied for deliveries that outlive the dispatch.
struct BorrowedObject {
    /// Returns a copy the engine owns (never nil: the caller cannot fail). It may run
    /// under the registry lock (a sticky keep copies there), so it must not call into
    /// the bus; copying a Swift value runs no user code, only retains.
    let copy: _qtbus_object_copy
    /// Releases a copy made by `copy`.
    let release: qtbus_release
}

/// Makes a copy of a borrowed object that outlives the dispatch (see the file comment).
@usableFromInline package typealias _qtbus_object_copy = @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?

/// Swift-only: `qtbus_dispatch` of an event whose `object` is borrowed for the duration
/// of the call (see the file comment). The engine never releases `object`; it calls
/// `copy(object)` at most once, when a delivery must outlive the call, and releases the
/// copy with `release` after the copy's last delivery. On failure (< 0) the engine made
/// no copy and kept nothing. The checks are `qtbus_dispatch`'s.
@usableFromInline package func _qtbus_dispatch_borrowed(_ bus: OpaquePointer, type: UnsafePointer<CChar>,
                                     subtype: UnsafePointer<CChar>?, data: UnsafeRawPointer?, size: Int,
                                     object: UnsafeMutableRawPointer, copy: _qtbus_object_copy,
                                     release: qtbus_release, flags: UInt32) -> Int32 {
    guard let typeName = CName(type), flags & ~UInt32(QTBUS_EVENT_STICKY) == 0,
          data != nil || size == 0 else { return QTBUS_EINVAL.rawValue }
    var subtypeName: CName? = nil
    if let subtype {
        guard let s = CName(subtype) else { return QTBUS_EINVAL.rawValue }
        subtypeName = s
    }
    var event = Outgoing(type: typeName, subtype: subtypeName, data: data, size: size, object: object,
                         objectRelease: nil)
    event.borrowed = BorrowedObject(copy: copy, release: release)
    let bus = UnsafeMutablePointer<Bus>(bus)
    let record = epochEnter()
    let result = dispatchEvent(bus, &event, flags: flags)
    // dispatchEvent fails before it copies anything today; should a later check fail
    // after a copy, the copy is the engine's to release, never the caller's object.
    if result < 0 { event.finish() }
    epochExit(record)
    return result
}

/// Swift-only, not C ABI: `qtbus_event_object` read in place, without a call.  The Swift
/// API's delivery closures run once per closure per dispatch, where a call each shows
/// in the Swift benchmark's "dispatch, 100 closures" row.  `event` must be a live event.
@inlinable @inline(__always)
@usableFromInline package func _qtbus_event_object_inline(_ event: OpaquePointer) -> UnsafeMutableRawPointer? {
    UnsafeMutablePointer<EventView>(event).pointee.object
}

/// Swift-only, not C ABI: from inside a handler, keeps the request `event` carries open
/// (its completion waits) until `_qtbus_request_release`, and returns an event that
/// `_qtbus_event_reply` answers through meanwhile, from any thread; nil when `event` is
/// not a request.  The Swift API holds requests across its DispatchQueue hops, which the
/// engine sees as synchronous handlers.
@usableFromInline package func _qtbus_request_hold(_ event: OpaquePointer?) -> OpaquePointer? {
    guard let event else { return nil }
    return holdRequest(UnsafeMutablePointer<EventView>(event)).map { OpaquePointer($0) }
}

/// Swift-only, not C ABI: ends a `_qtbus_request_hold`, exactly once; no reply through
/// it afterwards.  The last reference completes the request (runs its release) here.
@usableFromInline package func _qtbus_request_release(_ held: OpaquePointer) {
    releaseHeldRequest(UnsafeMutablePointer<EventView>(held))
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
    request.retain()
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
    request.release()
}
