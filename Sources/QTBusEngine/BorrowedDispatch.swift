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
