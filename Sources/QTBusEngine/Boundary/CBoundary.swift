// The C boundary: one @_cdecl function per declaration of include/qtbus.h.
//
// Each converts and checks its arguments (NULLs, names, flags, sizes), then calls the
// engine.  A call that fails says why through qtbus_errmsg(): the check that refuses
// records its reason (Misuse.swift) and `reported` adds the function's name.  They take the exact types the header declares, imported from it through
// CQtbusShims, so a mismatch with the header is a compile error here; the C test
// suite's test_abi and scripts/check-exports.sh check the exported names and types
// from the other side.  Swift names carry a leading underscore so they cannot be
// confused with the imported C declarations.  They are `package` (and
// @usableFromInline for the Swift API's inlinable code): QTEventBus calls them, nothing
// outside this package sees them; the C symbols are exported all the same.
import CQtbusShims
import Glibc

private let versionString = StaticName(qtshim_version_string())

@inline(__always)
private func busPointer(_ bus: OpaquePointer?) -> UnsafeMutablePointer<Bus>? {
    bus.map { UnsafeMutablePointer<Bus>($0) }
}

/// A required, valid name; nil for NULL, empty, over-long or non-UTF-8 (the reason
/// recorded for qtbus_errmsg).
@inline(__always)
private func checkedName(_ text: UnsafePointer<CChar>?, _ role: NameRole) -> CName? {
    guard let text, let name = CName(text), name.isValidUTF8 else {
        _ = failName(text, role)
        return nil
    }
    return name
}

/// An optional name: `.some(nil)` for NULL, `.some(name)` when valid, nil when invalid.
@inline(__always)
private func checkedOptionalName(_ text: UnsafePointer<CChar>?, _ role: NameRole) -> CName?? {
    guard text != nil else { return .some(nil) }
    return checkedName(text, role).map { .some($0) }
}

/// A name whose UTF-8 is checked later (by the engine, only when it is new); nil, with
/// the reason recorded, for NULL, empty or over-long.
@inline(__always)
private func scannedName(_ text: UnsafePointer<CChar>?, _ role: NameRole) -> CName? {
    guard let text, let name = CName(text) else {
        _ = failName(text, role)
        return nil
    }
    return name
}

// MARK: - Why the last call failed

/// `reported`, for a call naming `bus`: a failure is also a MISUSE record for the bus's
/// trace hook (Trace.swift).
@inline(__always)
func reported(_ function: StaticString, on bus: OpaquePointer?, _ status: Int32) -> Int32 {
    if status < 0 { failed(function, on: bus, status) }
    return status
}

@inline(__always)
func reported(_ function: StaticString, on bus: UnsafeMutablePointer<Bus>, _ status: Int32) -> Int32 {
    reported(function, on: OpaquePointer(bus), status)
}

@inline(never)
func failed(_ function: StaticString, on bus: OpaquePointer?, _ status: Int32) {
    qtshim_failed(cText(function), status)
    traceMisuse(bus, cText(function), status)
}

@_cdecl("qtbus_report")
@usableFromInline package func _qtbus_report(_ bus: OpaquePointer?, _ function: UnsafePointer<CChar>?, _ status: Int32,
                                             _ reason: UnsafePointer<CChar>?) -> Int32 {
    guard let function else { return reported("qtbus_report", on: bus, failNull("the function name is NULL")) }
    guard status < 0 else {
        return reported("qtbus_report", on: bus, fail(QTBUS_EINVAL, "the status %llu is not a failure (< 0)",
                                                      value: UInt64(status)))
    }
    if let reason { qtshim_fail_reason(status, reason) }
    qtshim_failed(function, status)
    traceMisuse(bus, function, status)
    return status
}

@_cdecl("qtbus_errmsg")
@usableFromInline package func _qtbus_errmsg() -> UnsafePointer<CChar> {
    qtshim_errmsg()
}

// MARK: - Status and version

@_cdecl("qtbus_strerror")
@usableFromInline package func _qtbus_strerror(_ status: Int32) -> UnsafePointer<CChar> {
    qtshim_status_text(status)
}

@_cdecl("qtbus_version")
@usableFromInline package func _qtbus_version() -> UnsafePointer<CChar> {
    versionString.bytes
}

// MARK: - Buses

@_cdecl("qtbus_shared")
@usableFromInline package func _qtbus_shared() -> OpaquePointer {
    OpaquePointer(sharedBus)
}

@_cdecl("qtbus_bus_create")
@usableFromInline package func _qtbus_bus_create() -> OpaquePointer? {
    guard let bus = makeBus(shared: false) else {
        failed("qtbus_bus_create", QTBUS_ENOMEM.rawValue)
        return nil
    }
    return OpaquePointer(bus)
}

@_cdecl("qtbus_bus_destroy")
@usableFromInline package func _qtbus_bus_destroy(_ bus: OpaquePointer?) -> Int32 {
    guard let bus = busPointer(bus) else { return reported("qtbus_bus_destroy", on: bus, failNull("the bus is NULL")) }
    // In an epoch: a concurrent second destroy still reads the bus safely (ECLOSED).
    return reported("qtbus_bus_destroy", on: bus, withMemoryEpoch { destroyBus(bus) })
}

// MARK: - Queues

@_cdecl("qtbus_queue_main")
@usableFromInline package func _qtbus_queue_main() -> OpaquePointer {
    OpaquePointer(mainQueue)
}

@_cdecl("qtbus_queue_create")
@usableFromInline package func _qtbus_queue_create(_ label: UnsafePointer<CChar>?) -> OpaquePointer? {
    guard let queue = makeQueue(label: label) else {
        failed("qtbus_queue_create", QTBUS_ENOMEM.rawValue)
        return nil
    }
    return OpaquePointer(queue)
}

@_cdecl("qtbus_queue_release")
@usableFromInline package func _qtbus_queue_release(_ queue: OpaquePointer?) {
    guard let queue else { return }
    UnsafeMutablePointer<Queue>(queue).release()
}

@_cdecl("qtbus_main_fd")
@usableFromInline package func _qtbus_main_fd() -> Int32 {
    _ = mainQueue
    return qtshim_main_queue_fd()
}

@_cdecl("qtbus_main_drain")
@usableFromInline package func _qtbus_main_drain() -> Int32 {
    reported("qtbus_main_drain", mainDrain())
}

@_cdecl("qtbus_main_wait")
@usableFromInline package func _qtbus_main_wait(_ timeoutMs: Int32) -> Int32 {
    reported("qtbus_main_wait", mainWait(timeoutMs))
}

// MARK: - Bags

@_cdecl("qtbus_bag_create")
@usableFromInline package func _qtbus_bag_create(_ out: UnsafeMutablePointer<qtbus_bag>?) -> Int32 {
    guard let out else { return reported("qtbus_bag_create", failNull("bag_out is NULL")) }
    let id = makeBag()
    guard id != 0 else { return reported("qtbus_bag_create", QTBUS_ENOMEM.rawValue) }
    out.pointee = qtbus_bag(id: id)
    return QTBUS_OK.rawValue
}

@_cdecl("qtbus_bag_add")
@usableFromInline package func _qtbus_bag_add(_ bag: qtbus_bag, _ token: qtbus_token) -> Int32 {
    reported("qtbus_bag_add", addToBag(bag.id, token.id))
}

@_cdecl("qtbus_bag_dispose")
@usableFromInline package func _qtbus_bag_dispose(_ bag: qtbus_bag) -> Int32 {
    reported("qtbus_bag_dispose", disposeBag(bag.id))
}

// MARK: - Subscribing

private let knownSubFlags = UInt32(QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY)

@_cdecl("qtbus_subscribe")
@usableFromInline package func _qtbus_subscribe(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                      _ options: UnsafePointer<qtbus_sub_options>?,
                      _ handler: qtbus_handler?, _ userdata: UnsafeMutableRawPointer?,
                      _ release: qtbus_release?, _ tokenOut: UnsafeMutablePointer<qtbus_token>?) -> Int32 {
    reported("qtbus_subscribe", on: bus, subscribeChecked(bus, type, options, handler, userdata, release, owner: nil, tokenOut))
}

/// qtbus_subscribe's checks, then `subscribe`; also the Swift API's way in for owned
/// (freeWith) subscriptions.
func subscribeChecked(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ options: UnsafePointer<qtbus_sub_options>?,
                      _ handler: qtbus_handler?, _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
                      owner: OwnerCheck?, _ tokenOut: UnsafeMutablePointer<qtbus_token>?) -> Int32 {
    tokenOut?.pointee = qtbus_token(id: 0)
    // The type's UTF-8 is checked by `subscribe` only when it is new to the bus.
    guard let bus = busPointer(bus) else { return failNull("the bus is NULL") }
    guard let handler else { return failNull("the handler is NULL") }
    guard let type = scannedName(type, .type) else { return QTBUS_EINVAL.rawValue }
    var request = SubscribeRequest(type: type, subtypes: Vector(), queue: nil, bag: 0, priority: 0, flags: 0,
                                   handler: handler, userdata: userdata, release: release, owner: owner)
    defer { request.subtypes.free() }
    if let o = options?.pointee {
        guard o.flags & ~knownSubFlags == 0 else {
            return fail(QTBUS_EINVAL, "unknown flag bits 0x%llx in options->flags", value: UInt64(o.flags & ~knownSubFlags))
        }
        if o.subtype_count > 0 {
            guard let names = o.subtypes else { return failNull("options->subtypes is NULL with a subtype_count") }
            guard o.subtype_count <= QTBUS_MAX_SUBTYPES else {
                return fail(QTBUS_EINVAL, "options->subtype_count is %llu (QTBUS_MAX_SUBTYPES is 64)", value: UInt64(UInt(bitPattern: o.subtype_count)))
            }
            guard request.subtypes.reserve(o.subtype_count) else { return QTBUS_ENOMEM.rawValue }
            for i in 0..<o.subtype_count {
                guard let name = checkedName(names[i], .subtype) else { return QTBUS_EINVAL.rawValue }
                // Listed twice: still one node, so each event is delivered once.
                var listed = false
                request.subtypes.forEach { if $0.isSame(as: name) { listed = true } }
                if !listed { request.subtypes.appendReserved(name) }
            }
        }
        request.queue = o.queue.map { UnsafeMutablePointer<Queue>($0) }
        request.bag = o.bag.id
        request.priority = o.priority
        request.flags = o.flags
    }
    let result = subscribe(bus, request)
    if result < 0 { return Int32(result) }
    tokenOut?.pointee = qtbus_token(id: UInt64(result))
    return QTBUS_OK.rawValue
}

@_cdecl("qtbus_token_dispose")
@usableFromInline package func _qtbus_token_dispose(_ token: qtbus_token) -> Int32 {
    reported("qtbus_token_dispose", disposeToken(token.id))
}

@_cdecl("qtbus_token_is_active")
@usableFromInline package func _qtbus_token_is_active(_ token: qtbus_token) -> Int32 {
    tokenIsActive(token.id) ? 1 : 0
}

@_cdecl("qtbus_subscriber_count")
@usableFromInline package func _qtbus_subscriber_count(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                             _ subtype: UnsafePointer<CChar>?) -> Int32 {
    guard let bus = busPointer(bus) else { return reported("qtbus_subscriber_count", on: bus, failNull("the bus is NULL")) }
    guard let type = checkedName(type, .type), let sub = checkedOptionalName(subtype, .subtype) else {
        return reported("qtbus_subscriber_count", on: bus, QTBUS_EINVAL.rawValue)
    }
    return reported("qtbus_subscriber_count", on: bus, withMemoryEpoch { subscriberCount(bus, type, sub) })
}

@_cdecl("qtbus_bus_foreach")
@usableFromInline package func _qtbus_bus_foreach(_ bus: OpaquePointer?,
                                                  _ fn: (@convention(c) (UnsafePointer<qtbus_sub_info>?, UnsafeMutableRawPointer?) -> Void)?,
                                                  _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    guard let bus = busPointer(bus) else { return reported("qtbus_bus_foreach", on: bus, failNull("the bus is NULL")) }
    guard let fn else { return reported("qtbus_bus_foreach", on: bus, failNull("fn is NULL")) }
    // The snapshot is taken in a memory section; `fn` runs outside any, on copies.
    switch withMemoryEpoch({ snapshotSubscriptions(bus) }) {
    case .failure(let status):
        return reported("qtbus_bus_foreach", on: bus, status.value)
    case .success(let snapshot):
        for i in 0..<snapshot.count { fn(snapshot.infos + i, userdata) }
        snapshot.free()
        return Int32(clamping: snapshot.count)
    }
}

// MARK: - Tracing

@_cdecl("qtbus_trace_set")
@usableFromInline package func _qtbus_trace_set(_ bus: OpaquePointer?, _ kinds: UInt32, _ fn: qtbus_trace_fn?,
                                                _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?) -> Int32 {
    let f: StaticString = "qtbus_trace_set"
    guard let bus = busPointer(bus) else { return reported(f, failNull("the bus is NULL")) }
    guard kinds & ~knownTraceKinds == 0 else {
        return reported(f, on: bus, fail(QTBUS_EINVAL, "unknown bits 0x%llx in kinds", value: UInt64(kinds & ~knownTraceKinds)))
    }
    if fn == nil && (kinds != 0 || userdata != nil || release != nil) {
        return reported(f, on: bus, fail(QTBUS_EINVAL, "fn is NULL (removing the hook) with kinds, userdata or a release"))
    }
    return reported(f, on: bus, setTrace(bus, kinds: kinds, fn, userdata, release))
}

// MARK: - Dispatching

private let knownEventFlags = UInt32(QTBUS_EVENT_STICKY)

/// The checks every dispatch entry point shares; nil (the reason recorded) when the
/// event is malformed.
@inline(__always)
private func outgoing(_ desc: UnsafePointer<qtbus_event_desc>?) -> Outgoing? {
    guard let d = desc?.pointee, let typeText = d.type, let type = CName(typeText),
          d.flags & ~knownEventFlags == 0, d.data != nil || d.size == 0 else {
        refuseEvent(desc)
        return nil
    }
    var subtype: CName? = nil
    if let subtypeText = d.subtype {
        guard let s = CName(subtypeText) else {
            _ = failName(subtypeText, .subtype)
            return nil
        }
        subtype = s
    }
    return Outgoing(type: type, subtype: subtype, data: d.data, size: d.size,
                    object: d.object, objectRelease: d.object_release)
}

/// Records why `outgoing` refused `desc`.  It checks again, out of line, what
/// `outgoing`'s one combined guard found wrong: a guard per reason, each recording its
/// own, cost every dispatch 4 instructions more (callgrind).  `readsType`: false for
/// qtbus_dispatch_id, which does not read event->type.
@inline(never) @discardableResult
private func refuseEvent(_ desc: UnsafePointer<qtbus_event_desc>?, readsType: Bool = true) -> Int32 {
    guard let d = desc?.pointee else { return failNull("the event is NULL") }
    if readsType && (d.type == nil || CName(d.type!) == nil) { return failName(d.type, .type) }
    if d.flags & ~knownEventFlags != 0 {
        return fail(QTBUS_EINVAL, "unknown flag bits 0x%llx in event->flags", value: UInt64(d.flags & ~knownEventFlags))
    }
    return fail(QTBUS_EINVAL, "event->data is NULL with a size of %llu", value: UInt64(UInt(bitPattern: d.size)))
}

@_cdecl("qtbus_dispatch")
@usableFromInline package func _qtbus_dispatch(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    guard let bus = busPointer(bus) else { return reported("qtbus_dispatch", on: bus, failNull("the bus is NULL")) }
    guard var event = outgoing(desc) else { return reported("qtbus_dispatch", on: bus, QTBUS_EINVAL.rawValue) }
    let flags = desc.unsafelyUnwrapped.pointee.flags
    return reported("qtbus_dispatch", on: bus, withEpoch { dispatchEvent(bus, &event, flags: flags) })
}

@_cdecl("qtbus_type_lookup")
@usableFromInline package func _qtbus_type_lookup(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                                                  _ out: UnsafeMutablePointer<qtbus_type_id>?) -> Int32 {
    out?.pointee = qtbus_type_id(id: 0)
    guard let b = busPointer(bus) else { return reported("qtbus_type_lookup", on: bus, failNull("the bus is NULL")) }
    guard let out else { return reported("qtbus_type_lookup", on: bus, failNull("out is NULL")) }
    guard let name = checkedName(type, .type) else { return reported("qtbus_type_lookup", on: bus, QTBUS_EINVAL.rawValue) }
    var id: UInt64 = 0
    let status = lookupTypeId(b, name, &id)
    if status == QTBUS_OK.rawValue { out.pointee = qtbus_type_id(id: id) }
    return reported("qtbus_type_lookup", on: bus, status)
}

@_cdecl("qtbus_dispatch_id")
@usableFromInline package func _qtbus_dispatch_id(_ bus: OpaquePointer?, _ type: qtbus_type_id,
                                                  _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    guard let b = busPointer(bus) else { return reported("qtbus_dispatch_id", on: bus, failNull("the bus is NULL")) }
    // As `outgoing` checks, but the type is the id's: event->type is not read.
    guard let d = desc?.pointee, d.flags & ~knownEventFlags == 0, d.data != nil || d.size == 0 else {
        return reported("qtbus_dispatch_id", on: bus, refuseEvent(desc, readsType: false))
    }
    var subtype: CName? = nil
    if let text = d.subtype {
        guard let s = CName(text) else { return reported("qtbus_dispatch_id", on: bus, failName(text, .subtype)) }
        subtype = s
    }
    return reported("qtbus_dispatch_id", on: bus, withEpoch { dispatchById(b, type.id, d, subtype) })
}

/// Inside an epoch (the resolved table stays).
@inline(never)
private func dispatchById(_ bus: UnsafeMutablePointer<Bus>, _ id: UInt64, _ d: qtbus_event_desc, _ subtype: CName?) -> Int32 {
    guard let type = resolvedType(bus, id) else { return failTypeId(bus, id) }
    var event = Outgoing(type: type.pointee.name.cName, subtype: subtype, data: d.data, size: d.size,
                         object: d.object, objectRelease: d.object_release)
    return dispatchResolved(bus, type, &event, flags: d.flags)
}

/// Copies the event and posts its dispatch to `queue`.
private func post(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?,
                  _ queue: (UnsafeMutablePointer<Bus>) -> qtshim_dispatch_queue_t, isMain: Bool) -> Int32 {
    guard let bus = busPointer(bus) else { return failNull("the bus is NULL") }
    guard let event = outgoing(desc) else { return QTBUS_EINVAL.rawValue }
    guard event.type.isValidUTF8 else { return failName(desc.unsafelyUnwrapped.pointee.type, .type) }
    guard event.subtype?.isValidUTF8 ?? true else { return failName(desc.unsafelyUnwrapped.pointee.subtype, .subtype) }
    // In a memory section: a concurrent destroy cannot free the bus between the check
    // and the pin.
    return withMemoryEpoch {
        if isClosed(bus) { return QTBUS_ECLOSED.rawValue }
        guard let payload = makePayload(type: event.type, subtype: event.subtype, data: event.data, size: event.size,
                                        object: event.object, objectRelease: event.objectRelease, parent: nil) else {
            return QTBUS_ENOMEM.rawValue
        }
        postDispatch(bus, payload, flags: desc.unsafelyUnwrapped.pointee.flags, on: queue(bus), isMain: isMain)
        return QTBUS_OK.rawValue
    }
}

@_cdecl("qtbus_dispatch_on_bus_queue")
@usableFromInline package func _qtbus_dispatch_on_bus_queue(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    reported("qtbus_dispatch_on_bus_queue", on: bus, post(bus, desc, { $0.pointee.queue }, isMain: false))
}

@_cdecl("qtbus_dispatch_on_main")
@usableFromInline package func _qtbus_dispatch_on_main(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    reported("qtbus_dispatch_on_main", on: bus, post(bus, desc, { _ in mainQueue.pointee.dq }, isMain: true))
}

private let jsonTypeName = StaticName(qtshim_json_type())

@_cdecl("qtbus_dispatch_json")
@usableFromInline package func _qtbus_dispatch_json(_ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) -> Int32 {
    let f: StaticString = "qtbus_dispatch_json"
    guard let bus = busPointer(bus) else { return reported(f, on: bus, failNull("the bus is NULL")) }
    guard let name = checkedName(name, .name) else { return reported(f, on: bus, QTBUS_EINVAL.rawValue) }
    guard let json else { return reported(f, on: bus, failNull("the JSON text is NULL")) }
    let size = strlen(json)
    guard _isValidJSON(UnsafeRawBufferPointer(start: json, count: size)) else {
        return reported(f, on: bus, fail(QTBUS_EJSON, "the text is not JSON (RFC 8259, nesting up to QTBUS_JSON_MAX_DEPTH)"))
    }
    var event = Outgoing(type: jsonTypeName.name, subtype: name, data: json, size: size, object: nil, objectRelease: nil)
    return reported(f, on: bus, withEpoch { dispatchEvent(bus, &event, flags: 0) })
}

@_cdecl("qtbus_sticky_clear")
@usableFromInline package func _qtbus_sticky_clear(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ subtype: UnsafePointer<CChar>?) -> Int32 {
    guard let bus = busPointer(bus) else { return reported("qtbus_sticky_clear", on: bus, failNull("the bus is NULL")) }
    guard let type = checkedName(type, .type), let sub = checkedOptionalName(subtype, .subtype) else {
        return reported("qtbus_sticky_clear", on: bus, QTBUS_EINVAL.rawValue)
    }
    return reported("qtbus_sticky_clear", on: bus, withMemoryEpoch { clearSticky(bus, type, sub) })
}

// MARK: - The event a handler receives

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
@usableFromInline package func _qtbus_event_data(_ event: OpaquePointer?, _ sizeOut: UnsafeMutablePointer<Int>?) -> UnsafeRawPointer? {
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

@_cdecl("qtbus_event_stop")
@usableFromInline package func _qtbus_event_stop(_ event: OpaquePointer?) -> Int32 {
    guard let v = view(event) else { return reported("qtbus_event_stop", failNull("the event is NULL")) }
    guard !v.pointee.queued else {
        return reported("qtbus_event_stop", fail(QTBUS_EINVAL, "the event is delivered after its dispatch returned (queued or replayed): there is nothing left to stop"))
    }
    v.pointee.stopped = true
    return QTBUS_OK.rawValue
}

@_cdecl("qtbus_event_flags")
@usableFromInline package func _qtbus_event_flags(_ event: OpaquePointer?) -> UInt32 {
    guard let v = view(event) else { return 0 }
    return (v.pointee.sticky ? stickyFlag : 0) | (v.pointee.request != nil ? requestFlag : 0)
}

// MARK: - Request and reply

@_cdecl("qtbus_request")
@usableFromInline package func _qtbus_request(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?,
                           _ onReply: qtbus_reply_handler?, _ userdata: UnsafeMutableRawPointer?,
                           _ release: qtbus_release?) -> Int32 {
    guard let bus = busPointer(bus) else { return reported("qtbus_request", on: bus, failNull("the bus is NULL")) }
    guard var event = outgoing(desc) else { return reported("qtbus_request", on: bus, QTBUS_EINVAL.rawValue) }
    guard desc.unsafelyUnwrapped.pointee.flags & knownEventFlags == 0 else {
        return reported("qtbus_request", on: bus, fail(QTBUS_EINVAL, "a request cannot be sticky (QTBUS_EVENT_STICKY)"))
    }
    return reported("qtbus_request", on: bus, sendRequest(bus, &event, onReply: onReply, userdata: userdata, release: release))
}

@_cdecl("qtbus_event_reply")
@usableFromInline package func _qtbus_event_reply(_ event: OpaquePointer?, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    guard let v = view(event) else { return reported("qtbus_event_reply", failNull("the event is NULL")) }
    return reported("qtbus_event_reply", replyTo(v, data, size))
}

@_cdecl("qtbus_event_defer")
@usableFromInline package func _qtbus_event_defer(_ event: OpaquePointer?, _ out: UnsafeMutablePointer<qtbus_deferred>?) -> Int32 {
    out?.pointee = qtbus_deferred(id: 0)
    guard let v = view(event) else { return reported("qtbus_event_defer", failNull("the event is NULL")) }
    guard let out else { return reported("qtbus_event_defer", failNull("out is NULL")) }
    var id: UInt64 = 0
    let status = deferReply(v, &id)
    out.pointee = qtbus_deferred(id: id)
    return reported("qtbus_event_defer", status)
}

@_cdecl("qtbus_deferred_reply")
@usableFromInline package func _qtbus_deferred_reply(_ deferred: qtbus_deferred, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    reported("qtbus_deferred_reply", deferredReply(deferred.id, data, size))
}

@_cdecl("qtbus_deferred_finish")
@usableFromInline package func _qtbus_deferred_finish(_ deferred: qtbus_deferred) -> Int32 {
    reported("qtbus_deferred_finish", finishDeferred(deferred.id))
}

// MARK: - Commands

private let knownCommandFlags = UInt32(QTBUS_COMMAND_CONCURRENT)

@_cdecl("qtbus_command_create")
@usableFromInline package func _qtbus_command_create(_ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ flags: UInt32,
                                  _ execute: qtbus_execute_fn?, _ userdata: UnsafeMutableRawPointer?,
                                  _ release: qtbus_release?, _ out: UnsafeMutablePointer<qtbus_command>?) -> Int32 {
    let f: StaticString = "qtbus_command_create"
    out?.pointee = qtbus_command(id: 0)
    guard let bus = busPointer(bus) else { return reported(f, on: bus, failNull("the bus is NULL")) }
    guard let name = checkedName(name, .name) else { return reported(f, on: bus, QTBUS_EINVAL.rawValue) }
    guard let execute else { return reported(f, on: bus, failNull("the execute function is NULL")) }
    guard let out else { return reported(f, on: bus, failNull("command_out is NULL")) }
    guard flags & ~knownCommandFlags == 0 else {
        return reported(f, on: bus, fail(QTBUS_EINVAL, "unknown flag bits 0x%llx", value: UInt64(flags & ~knownCommandFlags)))
    }
    let result = makeCommand(bus, name, concurrent: flags & knownCommandFlags != 0, execute, userdata, release)
    if result < 0 { return reported(f, on: bus, Int32(result)) }
    out.pointee = qtbus_command(id: UInt64(result))
    return QTBUS_OK.rawValue
}

@_cdecl("qtbus_command_execute")
@usableFromInline package func _qtbus_command_execute(_ command: qtbus_command, _ input: UnsafePointer<qtbus_event_desc>?,
                                   _ queue: OpaquePointer?) -> Int32 {
    var event: Outgoing? = nil
    if let input {
        // Checked in full here: the input is not looked up in any table.
        let f: StaticString = "qtbus_command_execute"
        guard let e = outgoing(input) else { return reported(f, QTBUS_EINVAL.rawValue) }
        guard input.pointee.flags == 0 else { return reported(f, fail(QTBUS_EINVAL, "an input cannot be sticky (input->flags)")) }
        guard e.type.isValidUTF8 else { return reported(f, failName(input.pointee.type, .type)) }
        guard e.subtype?.isValidUTF8 ?? true else { return reported(f, failName(input.pointee.subtype, .subtype)) }
        event = e
    }
    return reported("qtbus_command_execute", executeCommand(command.id, &event, queue.map { UnsafeMutablePointer<Queue>($0) }))
}

@_cdecl("qtbus_command_set_enabled")
@usableFromInline package func _qtbus_command_set_enabled(_ command: qtbus_command, _ enabled: Int32) -> Int32 {
    reported("qtbus_command_set_enabled", setCommandEnabled(command.id, enabled != 0))
}

@_cdecl("qtbus_command_is_executing")
@usableFromInline package func _qtbus_command_is_executing(_ command: qtbus_command) -> Int32 {
    reported("qtbus_command_is_executing", queryCommand(command.id, executing: true))
}

@_cdecl("qtbus_command_is_enabled")
@usableFromInline package func _qtbus_command_is_enabled(_ command: qtbus_command) -> Int32 {
    reported("qtbus_command_is_enabled", queryCommand(command.id, executing: false))
}

@_cdecl("qtbus_execution_send")
@usableFromInline package func _qtbus_execution_send(_ execution: qtbus_execution, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    guard data != nil || size == 0 else {
        return reported("qtbus_execution_send", fail(QTBUS_EINVAL, "data is NULL with a size of %llu", value: UInt64(UInt(bitPattern: size))))
    }
    return reported("qtbus_execution_send", sendFromExecution(execution.id, data, size))
}

@_cdecl("qtbus_execution_finish")
@usableFromInline package func _qtbus_execution_finish(_ execution: qtbus_execution, _ error: Int32,
                                    _ message: UnsafePointer<CChar>?) -> Int32 {
    reported("qtbus_execution_finish", finishExecution(execution.id, error, message))
}

@_cdecl("qtbus_command_dispose")
@usableFromInline package func _qtbus_command_dispose(_ command: qtbus_command) -> Int32 {
    reported("qtbus_command_dispose", disposeCommand(command.id))
}

// MARK: - Shared sources

private let knownSourceFlags = UInt32(QTBUS_SOURCE_AUTOCONNECT)

@_cdecl("qtbus_source_create")
@usableFromInline package func _qtbus_source_create(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ flags: UInt32,
                                 _ start: qtbus_source_start?, _ stop: qtbus_source_stop?,
                                 _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
                                 _ out: UnsafeMutablePointer<qtbus_source>?) -> Int32 {
    let f: StaticString = "qtbus_source_create"
    out?.pointee = qtbus_source(id: 0)
    guard let bus = busPointer(bus) else { return reported(f, on: bus, failNull("the bus is NULL")) }
    guard let type = checkedName(type, .type) else { return reported(f, on: bus, QTBUS_EINVAL.rawValue) }
    guard let start else { return reported(f, on: bus, failNull("the start function is NULL")) }
    guard let out else { return reported(f, on: bus, failNull("source_out is NULL")) }
    guard flags & ~knownSourceFlags == 0 else {
        return reported(f, on: bus, fail(QTBUS_EINVAL, "unknown flag bits 0x%llx", value: UInt64(flags & ~knownSourceFlags)))
    }
    let result = makeSource(bus, type, autoconnect: flags & knownSourceFlags != 0, start, stop, userdata, release)
    if result < 0 { return reported(f, on: bus, Int32(result)) }
    out.pointee = qtbus_source(id: UInt64(result))
    return QTBUS_OK.rawValue
}

@_cdecl("qtbus_source_connect")
@usableFromInline package func _qtbus_source_connect(_ source: qtbus_source) -> Int32 {
    reported("qtbus_source_connect", setSourceConnected(source.id, true))
}

@_cdecl("qtbus_source_disconnect")
@usableFromInline package func _qtbus_source_disconnect(_ source: qtbus_source) -> Int32 {
    reported("qtbus_source_disconnect", setSourceConnected(source.id, false))
}

@_cdecl("qtbus_source_dispose")
@usableFromInline package func _qtbus_source_dispose(_ source: qtbus_source) -> Int32 {
    reported("qtbus_source_dispose", disposeSource(source.id))
}
