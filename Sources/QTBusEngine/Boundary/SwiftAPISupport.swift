// SPDX-License-Identifier: MIT
// The seam between the Swift API (QTEventBus) and the engine: the engine entry points
// that only the Swift API uses.  None is C ABI (no @_cdecl, nothing exported); all are
// `package`, so nothing outside this package can call them.  Their names start with
// `_qtEngine`, because `_qtbus_x` means "the Swift half of qtbus.h's qtbus_x"
// (C*.swift, a file per section of the header), which the Swift API calls for
// everything else.
//
// How the work is split, and why these entry points exist:
// - Queues.  The engine's subscriptions of the Swift API are always synchronous: a Swift
//   `DispatchQueue` cannot be handed to the engine (an engine queue is a qtbus_queue),
//   so an `atQueue` subscription hops itself, with `queue.async`, and re-checks its
//   token when the hop runs (lifetime rule 2).  The engine would then see the handler
//   return before it ran, complete a request too early and refuse its replies: so a hop
//   holds the request (`_qtEngineHoldRequest`), as a queued delivery's payload does.
// - Bags.  A Swift `QTDisposeBag` is a Swift object holding tokens, not an engine bag: it
//   must dispose them when it is deinitialised, from any thread, and it prunes tokens
//   that ended on their own.  Engine bags (qtbus_bag) serve C.
// - Types.  The Swift API names an event type by its metatype (a key), not by a C name.
//   The engine keeps, per bus, the handle of each Swift type dispatched on it (its
//   TypeEntry) with what the Swift API keeps about the type (`info`: its type record,
//   a pointer the engine never reads), in the bus's table of type ids (TypeIds.swift).
//   A synchronous dispatch looks the handle up once, inside its own dispatch section
//   (`_qtEngineDispatchSwift`): that lookup is the only one a Swift dispatch makes, and
//   its only entry into the engine; the first dispatch of a type on a bus, which finds
//   none, registers the type first (`_qtEngineLearnSwiftType`, outside any section).
// - Values.  A typed Swift dispatch carries its value as the event's object.  Giving the
//   engine ownership of it (qtbus_dispatch's object + object_release) means a malloc and
//   a free per dispatch, the largest cost of a synchronous dispatch to one closure
//   (bench-swift's "dispatch, 1 closure" row).  `_qtEngineDispatchBorrowed` leaves it on
//   the caller's stack: the engine only borrows it for the call, and when a delivery
//   must outlive the call (a queued subscription, a sticky keep, a replay backlog: every
//   such path goes through `Outgoing.ensurePayload`) it asks the caller for a heap copy
//   with `copy`, owns that copy like any object passed to qtbus_dispatch and releases it
//   with `release` after its last delivery.  Deliveries made during the call may see
//   either the borrowed object or the copy; both hold the same value.  Each delivery
//   then reads the value with `_qtEngineEventObject`, inline.
// - Locks.  The Swift API keeps its own small lock (`_QTLocked`, which ThreadSanitizer
//   understands) for what it keeps per process (type records, names); it is not on the
//   engine's side of this seam.
import CQtbusShims
import CQtbusLibc

// MARK: - Swift types and the synchronous dispatch

/// What `_qtEngineDispatchSwift` returns when the Swift type is not registered on the
/// bus: nothing was dispatched, nothing taken.  Not a status (statuses are small).
@inlinable package var _qtEngineTypeNotLearned: Int32 { .min }

/// Swift-only: `qtbus_dispatch` of a value of the Swift event type `key` (its metatype's
/// address) in the borrowed `object` (see the file comment: Values): the Swift API's
/// synchronous dispatch, one engine call.  Makes the dispatch's one type lookup, this
/// bus's handle of the type (`_qtEngineLearnSwiftType`), and dispatches.  For a type
/// whose events carry bytes, calls `bytes` once, inside this dispatch's section, with
/// the rest of the dispatch: `bytes` makes the bytes (user code: `eventBytes`, which
/// delays only reclamation, as a handler does) and passes them to it, and returns what
/// it returns; that continuation enters nothing again (no section, lookup or check).
/// When the type is not registered on this bus, returns `_qtEngineTypeNotLearned` with
/// nothing done: the caller registers it, outside any section, and dispatches.
/// `subtype`, `subtypeLength` and the checks are `_qtEngineDispatchBorrowed`'s, made
/// after the lookup (before it, they cost every dispatch registers held across it).
@usableFromInline package func _qtEngineDispatchSwift(
    _ bus: OpaquePointer, key: UInt, subtype: UnsafePointer<CChar>?, subtypeLength: Int,
    object: UnsafeMutableRawPointer, flags: UInt32,
    bytes: (_ dispatch: (_ data: UnsafeRawPointer?, _ size: Int) -> Int32) -> Int32
) -> Int32 {
    let b = UnsafeMutablePointer<Bus>(bus)
    return withEpochRecord { record in
        guard let slot = swiftType(b, UInt64(key)) else { return _qtEngineTypeNotLearned }
        // Inherits, and sets the context for its handlers, as a C dispatch does.
        return withHeaders(nil, flags: 0, record) { headers in
            if slot.pointee.withData {
                return dispatchAskingBytes(b, slot, subtype, subtypeLength, object, flags, headers, bytes)
            }
            let subtypeName: CName?
            do throws(QTBusStatus) { subtypeName = try borrowedChecks(flags, nil, 0, subtype, subtypeLength) } catch {
                return reported("qtbus_dispatch", on: bus, error.value)
            }
            return reported(
                "qtbus_dispatch", on: bus,
                dispatchBorrowed(
                    b, slot.pointee.entry, nil, subtypeName, nil, 0, object,
                    slot.pointee.borrowed, flags, headers))
        }
    }
}

/// `_qtEngineDispatchSwift` of a type whose events carry bytes: `bytes` asked for them,
/// with the rest of the dispatch.  Out of line: its continuation's context would cost
/// the other dispatches their registers.
@inline(never)
private func dispatchAskingBytes(
    _ bus: UnsafeMutablePointer<Bus>, _ slot: UnsafeMutablePointer<SwiftTypeSlot>,
    _ subtype: UnsafePointer<CChar>?, _ subtypeLength: Int, _ object: UnsafeMutableRawPointer,
    _ flags: UInt32, _ headers: UnsafeMutablePointer<HeaderBlock>?,
    _ bytes: (_ dispatch: (_ data: UnsafeRawPointer?, _ size: Int) -> Int32) -> Int32
) -> Int32 {
    let c = OpaquePointer(bus)
    let subtypeName: CName?
    do { subtypeName = try borrowedChecks(flags, nil, 0, subtype, subtypeLength) } catch {
        return reported("qtbus_dispatch", on: c, error.value)
    }
    let (type, borrowed) = (slot.pointee.entry, slot.pointee.borrowed)
    return bytes { data, size in
        reported(
            "qtbus_dispatch", on: c,
            dispatchBorrowed(bus, type, nil, subtypeName, data, size, object, borrowed, flags, headers))
    }
}

/// Swift-only: the `info` the Swift event type `key` was registered with on `bus`, nil
/// when it was not (a posted dispatch's lookup: the same one, in a memory section).
@usableFromInline package func _qtEngineSwiftTypeInfo(_ bus: OpaquePointer, key: UInt) -> UnsafeRawPointer? {
    let b = UnsafeMutablePointer<Bus>(bus)
    return withMemoryEpoch { swiftType(b, UInt64(key))?.pointee.info }
}

/// Swift-only: registers the Swift event type `key`, whose engine type name is `name`
/// (valid: the Swift API checked it), on `bus`: with `info`, which must stay valid as
/// long as the bus (the Swift API's type records are never freed), how its borrowed
/// objects are copied and released, and whether its events carry data the Swift API
/// makes for each dispatch (then `_qtEngineDispatchSwift` asks for it).  Called before
/// the type's first dispatch on the bus, outside any section, when
/// `_qtEngineDispatchSwift` said `_qtEngineTypeNotLearned`.  Returns the type's handle,
/// valid as long as the bus; nil when the bus is closed or out of memory (the dispatch
/// then goes by name and reports it).  A key registered already keeps what it was
/// first registered with.
@usableFromInline package func _qtEngineLearnSwiftType(
    _ bus: OpaquePointer, key: UInt, name: UnsafePointer<CChar>,
    info: UnsafeRawPointer, copy: _QTEngineObjectCopy,
    release: qtbus_release, withData: Bool
) -> OpaquePointer? {
    guard key != 0, let cName = CName(name), cName.isValidUTF8 else { return nil }
    return learnSwiftType(
        UnsafeMutablePointer<Bus>(bus), UInt64(key), cName, info: info,
        borrowed: BorrowedObject(copy: copy, release: release), withData: withData
    )
    .map { OpaquePointer($0) }
}

/// Swift-only: `qtbus_dispatch` of an event whose `object` is borrowed for the duration
/// of the call (see the file comment: Values), where `_qtEngineDispatchSwift` cannot
/// make it (the first dispatch of a type on the bus, after its registration, or by name
/// when that failed).  The engine never releases `object`; it calls `copy(object)` at
/// most once, when a delivery must outlive the call, and releases the copy with
/// `release` after the copy's last delivery.  On failure (< 0) the engine made no copy and kept nothing.  The
/// checks are `qtbus_dispatch`'s.
///
/// `type`: this bus's handle of the type (`_qtEngineLearnSwiftType`'s); nil: by
/// `typeName`, as `qtbus_dispatch`.
///
/// `subtypeLength`: the UTF-8 length of the Swift string `subtype` was made from. A NUL
/// byte inside it ends the C string early, which the length measured here then shows:
/// refused, rather than dispatched under the shorter name (the Swift API traps on it).
@usableFromInline package func _qtEngineDispatchBorrowed(
    _ bus: OpaquePointer, type: OpaquePointer?,
    typeName: UnsafePointer<CChar>?,
    subtype: UnsafePointer<CChar>?, subtypeLength: Int,
    data: UnsafeRawPointer?, size: Int,
    object: UnsafeMutableRawPointer, copy: _QTEngineObjectCopy,
    release: qtbus_release, flags: UInt32
) -> Int32 {
    let f: StaticString = "qtbus_dispatch"
    let subtypeName: CName?
    do { subtypeName = try borrowedChecks(flags, data, size, subtype, subtypeLength) } catch {
        return reported(f, on: bus, error.value)
    }
    let engineBus = UnsafeMutablePointer<Bus>(bus)
    let borrowed = BorrowedObject(copy: copy, release: release)
    let entry = type.map { UnsafeMutablePointer<TypeEntry>($0) }
    // Its own dispatch section: called from no other (`_qtSendFirst` registers the type
    // outside any), and what a handler releases must wait for the dispatch's end.
    return withEpochRecord { record in
        // Inherits, and sets the context for its handlers, as a C dispatch does.
        withHeaders(nil, flags: 0, record) { headers in
            reported(
                f, on: bus,
                dispatchBorrowed(engineBus, entry, typeName, subtypeName, data, size, object, borrowed, flags, headers))
        }
    }
}

/// The checks of both borrowed dispatches, as qtbus_dispatch's (the Swift API passes
/// valid flags and bytes): the subtype, scanned, and its length compared with the
/// Swift string's.
@inline(__always)
private func borrowedChecks(
    _ flags: UInt32, _ data: UnsafeRawPointer?, _ size: Int, _ subtype: UnsafePointer<CChar>?,
    _ subtypeLength: Int
) throws(QTBusStatus) -> CName? {
    guard flags & ~UInt32(QTBUS_EVENT_STICKY) == 0, data != nil || size == 0 else {
        throw QTBusStatus(QTBUS_EINVAL.rawValue)
    }
    guard let subtype else { return nil }
    guard let s = CName(subtype), s.length == subtypeLength else {
        throw QTBusStatus(failSubtype(subtype, subtypeLength))
    }
    return s
}

/// Why a borrowed dispatch's subtype was refused.
@inline(never)
private func failSubtype(_ subtype: UnsafePointer<CChar>, _ length: Int) -> Int32 {
    CName(subtype) == nil ? failName(subtype, .subtype) : fail(QTBUS_EINVAL, "the subtype holds a NUL byte")
}

/// A borrowed dispatch once checked, inside its section: of the type `resolved`, or else
/// by the name `type`.
@inline(__always)
private func dispatchBorrowed(
    _ bus: UnsafeMutablePointer<Bus>, _ resolved: UnsafeMutablePointer<TypeEntry>?,
    _ type: UnsafePointer<CChar>?, _ subtype: CName?, _ data: UnsafeRawPointer?, _ size: Int,
    _ object: UnsafeMutableRawPointer, _ borrowed: BorrowedObject, _ flags: UInt32,
    _ headers: UnsafeMutablePointer<HeaderBlock>?
) -> Int32 {
    let typeName: CName
    if let resolved {
        typeName = resolved.pointee.name.cName
    } else {
        guard let type, let name = CName(type) else { return failName(type, .type) }
        typeName = name
    }
    var event = Outgoing(type: typeName, subtype: subtype, data: data, size: size, object: object, objectRelease: nil)
    event.borrowed = borrowed
    event.headers = headers
    let result =
        if let resolved {
            dispatchResolved(bus, resolved, &event, flags: flags)
        } else {
            dispatchEvent(bus, &event, flags: flags)
        }
    // dispatchEvent fails before it copies anything today; should a later check fail
    // after a copy, the copy is the engine's to release, never the caller's object.
    if result < 0 { event.finish() }
    return result
}

// MARK: - Subscriptions and events

/// Swift-only: `qtbus_subscribe` of a subscription that ends when its owner is gone
/// (`freeWith`; Owners.swift).  `alive(userdata)` says whether the owner is still there
/// (never called under the engine's lock); `pin(userdata)` returns a strong reference to
/// the owner, or nil once it is gone, and must run no user code (it is called under the
/// lock); `unpin` drops that reference, never under the lock.
@usableFromInline package func _qtEngineSubscribeOwned(
    _ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ options: UnsafePointer<qtbus_sub_options>,
    _ handler: qtbus_handler, _ userdata: UnsafeMutableRawPointer, _ release: qtbus_release,
    alive: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Bool,
    pin: @escaping @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?,
    unpin: @escaping @convention(c) (UnsafeMutableRawPointer?) -> Void,
    _ tokenOut: UnsafeMutablePointer<qtbus_token>
) -> Int32 {
    subscribeChecked(
        bus, type, options, handler, userdata, release, owner: OwnerCheck(alive: alive, pin: pin, unpin: unpin),
        tokenOut)
}

/// `qtbus_event_object` read in place, without a call: the Swift API's delivery closures
/// run once per closure per dispatch, where a call each shows in bench-swift's
/// "dispatch, 100 closures" row.  `event` must be a live event.
@inlinable @inline(__always)
package func _qtEngineEventObject(_ event: OpaquePointer) -> UnsafeMutableRawPointer? {
    UnsafeMutablePointer<EventView>(event).pointee.object
}

// MARK: - Held requests
//
// A hop holds the request as a queued delivery's payload does: one reference, dropped
// when the hop has run.  The held request is an EventView of its own (type and subtype
// copied, no data, cannot be stopped) so that qtbus_event_reply answers through it
// unchanged.

/// From inside a handler: keeps the request `event` carries open (its completion waits)
/// until `_qtEngineReleaseHeldRequest`, and returns an event that `_qtbus_event_reply`
/// answers through meanwhile, from any thread; nil when `event` is not a request.
@usableFromInline package func _qtEngineHoldRequest(_ event: OpaquePointer?) -> OpaquePointer? {
    guard let event else { return nil }
    return holdRequest(UnsafeMutablePointer<EventView>(event)).map { OpaquePointer($0) }
}

/// Ends a `_qtEngineHoldRequest`, exactly once; no reply through it afterwards.  The
/// last reference completes the request (runs its release) here.
@usableFromInline package func _qtEngineReleaseHeldRequest(_ held: OpaquePointer) {
    releaseHeldRequest(UnsafeMutablePointer<EventView>(held))
}

/// Inside a handler: a view that keeps `view`'s request open (one reference) until
/// `releaseHeldRequest`; nil when the event is not a request.
func holdRequest(_ view: UnsafeMutablePointer<EventView>) -> UnsafeMutablePointer<EventView>? {
    guard let request = view.pointee.request else { return nil }
    request.retain()
    // Inside a handler, the request already accepted: these wait for memory.
    func copy(_ s: UnsafePointer<CChar>) -> UnsafePointer<CChar> {
        UnsafePointer(strdup(s) ?? waitForMemory { strdup(s) })
    }
    let type = copy(view.pointee.type)
    let subtype = view.pointee.subtype.map(copy)
    let held = allocateWaiting(EventView.self)
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
    free(held)
    request.release()
}

// MARK: - Queued work of Swift hops (qtbus_bus_wait_idle counts it)

/// A Swift `atQueue` hop is about to be posted: counted as queued work of `bus` (which
/// stays allocated until `_qtEngineQueuedWorkEnd`).  `main`: posted to the main
/// queue; then `_qtEngineMainWorkPosted` follows the post, as for the engine's own
/// main-queue work (Store/Bus.swift says why).
@usableFromInline package func _qtEngineQueuedWorkBegin(_ bus: OpaquePointer, main: Bool) {
    beginQueuedWork(UnsafeMutablePointer<Bus>(bus), main: main)
}

@usableFromInline package func _qtEngineMainWorkPosted(_ bus: OpaquePointer) {
    mainWorkPosted(UnsafeMutablePointer<Bus>(bus))
}

/// The hop ran (or was dropped): its queued work is over.
@usableFromInline package func _qtEngineQueuedWorkEnd(_ bus: OpaquePointer) {
    endQueuedWork(UnsafeMutablePointer<Bus>(bus))
}

/// A Swift subscription's buffer (`buffer(_:whenFull:)`) dropped a delivery: the DROP
/// record and the `drop` probe, as for an engine queue's drop.
package func _qtEngineReportDrop(
    _ bus: OpaquePointer, token: UInt64, type: String, subtype: String?,
    rule: StaticString
) {
    type.withCString { type in
        guard let subtype else { return reportDrop(UnsafeMutablePointer<Bus>(bus), token: token, type, nil, rule) }
        subtype.withCString { reportDrop(UnsafeMutablePointer<Bus>(bus), token: token, type, $0, rule) }
    }
}

/// Swift-only: the kinds (`qtbus_arg` values) of the signature `type` has on `bus`, in
/// order; nil when it has none there (never defined, or the bus is closed).  For the
/// Swift API's `emitSignal`, whose arguments carry their kinds: qtbus_signal_emitv reads
/// each value by the signature's kind and can only check the count, so the Swift API
/// checks the kinds first and traps on a mismatch.
package func _qtEngineSignalKinds(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>) -> [UInt8]? {
    guard let name = CName(type) else { return nil }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(QTBUS_SIGNAL_MAX_ARGS)) { kinds in
        let count = withMemoryEpoch { signatureKinds(UnsafeMutablePointer<Bus>(bus), name, kinds.baseAddress!) }
        return count < 0 ? nil : Array(kinds[..<count])
    }
}

/// Whether this is the process's main thread.
package func _qtEngineOnMainThread() -> Bool { qtshim_is_main_thread() }

/// Why `pattern` is not a valid pattern (QTBUS_SUB_PATTERN), or nil: for the Swift API to
/// trap in the call that takes it.
package func _qtEnginePatternProblem(_ pattern: String) -> String? {
    pattern.withCString { text in
        guard let name = CName(text) else { return nil }  // the name checks come first
        return patternProblem(name).map { "\($0)" }
    }
}

// MARK: - Event headers

/// Swift-only: calls `body` with each header (name, value) of the event the calling
/// thread is handling, in qtbus_event_header_at's order; none outside a handler
/// (`QTEventBus.currentHeaders`).
package func _qtEngineCurrentHeaders(_ body: (UnsafePointer<CChar>, UnsafePointer<CChar>) -> Void) {
    guard let raw = qtshim_tls_get(), let headers = raw.assumingMemoryBound(to: ThreadRecord.self).pointee.handling
    else { return }
    for i in 0..<headers.pointee.count {
        let h = headers.header(at: i)
        body(h.name, h.value)
    }
}

/// Swift-only: inside a handler, `event`'s headers held (one reference) for a closure
/// that runs later, outside the engine's call (an `atQueue` hop), until
/// `_qtEngineReleaseHeldHeaders` ends the hold; nil when the event has none.
@usableFromInline package func _qtEngineHoldHeaders(_ event: OpaquePointer) -> OpaquePointer? {
    guard let headers = UnsafeMutablePointer<EventView>(event).pointee.headers else { return nil }
    headers.retain()
    return OpaquePointer(headers)
}

/// Runs `body` (the later closure) as a handler of the event whose headers `held` are
/// (`_qtEngineHoldHeaders`): they are the thread's context meanwhile, read by
/// `_qtEngineCurrentHeaders` and inherited by its dispatches.
@usableFromInline package func _qtEngineWithHeldHeaders(_ held: OpaquePointer, _ body: () -> Void) {
    handlingEvent(UnsafeMutablePointer<HeaderBlock>(held), body)
}

/// Ends a `_qtEngineHoldHeaders`, exactly once (the hop ran or was dropped).
@usableFromInline package func _qtEngineReleaseHeldHeaders(_ held: OpaquePointer) {
    UnsafeMutablePointer<HeaderBlock>(held).release()
}
