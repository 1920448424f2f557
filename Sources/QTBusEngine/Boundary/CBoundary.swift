// SPDX-License-Identifier: MIT
// The C boundary: one @_cdecl function per declaration of include/qtbus.h (the typed
// signals' are in CSignals.swift).
//
// Each has the shape CEntry.swift describes: its arguments converted and checked, then
// one call into the engine, through `entryPoint`, which owns the section, the report of a
// failure (qtbus_errmsg(), the MISUSE trace record) and the status.  They take the
// exact types the header declares, imported from it through CQtbusShims, so a mismatch
// with the header is a compile error here; the C test suite's test_abi and
// scripts/check-exports.sh check the exported names and types from the other side.
// Swift names carry a leading underscore so they cannot be confused with the imported
// C declarations.  They are `package` (and @usableFromInline for the Swift API's
// inlinable code): QTEventBus calls them, nothing outside this package sees them; the
// C symbols are exported all the same.
import CQtbusShims
import CQtbusLibc

private let versionString = StaticName(qtshim_version_string())

/// A made handle's id (`result` >= 0) stored in `out`; a failure (< 0) returned as is.
@inline(__always)
private func stored<Handle>(_ result: Int64, in out: UnsafeMutablePointer<Handle>, _ handle: (UInt64) -> Handle) -> Int32 {
    if result < 0 { return Int32(result) }
    out.pointee = handle(UInt64(result))
    return QTBUS_OK.rawValue
}

/// `flags`, refused when they hold bits not in `known`.
@inline(__always)
private func knownFlags(_ flags: UInt32, _ known: UInt32) throws(QTBusStatus) -> UInt32 {
    try ensure(flags & ~known == 0, else: fail(QTBUS_EINVAL, "unknown flag bits 0x%llx", value: UInt64(flags & ~known)))
    return flags
}

// MARK: - Why the last call failed

/// qtbus_report's own checks: the caller's function name and failure.
@inline(__always)
private func reportable(_ function: UnsafePointer<CChar>?, _ status: Int32) throws(QTBusStatus) -> UnsafePointer<CChar> {
    let function = try required(function, "the function name is NULL")
    try ensure(status < 0, else: fail(QTBUS_EINVAL, "the status %llu is not a failure (< 0)", value: UInt64(status)))
    return function
}

@_cdecl("qtbus_report")
@usableFromInline package func _qtbus_report(_ bus: OpaquePointer?, _ function: UnsafePointer<CChar>?, _ status: Int32,
                                             _ reason: UnsafePointer<CChar>?) -> Int32 {
    // The failure it records and returns is the caller's, under the caller's name: only
    // a refusal is qtbus_report's own.
    let own = entryPoint("qtbus_report", on: bus, checks: try reportable(function, status)) { function in
        if let reason { qtshim_fail_reason(status, reason) }
        qtshim_failed(function, status)
        traceMisuse(bus, function, status)
        return QTBUS_OK.rawValue
    }
    return own < 0 ? own : status
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
    entryPoint("qtbus_bus_create", making: { makeBus(shared: false).map { OpaquePointer($0) } })
}

@_cdecl("qtbus_bus_destroy")
@usableFromInline package func _qtbus_bus_destroy(_ bus: OpaquePointer?) -> Int32 {
    // In a section: a concurrent second destroy still reads the bus safely (ECLOSED).
    entryPoint("qtbus_bus_destroy", bus: bus, .memory) { destroyBus($0) }
}

@_cdecl("qtbus_bus_wait_idle")
@usableFromInline package func _qtbus_bus_wait_idle(_ bus: OpaquePointer?, _ timeoutMs: Int32) -> Int32 {
    // The checks and the waiter's registration in a section; the wait after it, in
    // none.  A timeout is an answer, not a failure: no qtbus_errmsg(), no MISUSE record.
    var unit: UInt64 = 0
    let status = entryPoint("qtbus_bus_wait_idle", bus: bus, .memory) { startIdleWait($0, &unit) }
    guard status == QTBUS_OK.rawValue else { return status }
    return waitIdle(UnsafeMutablePointer<Bus>(bus!), timeoutMs: timeoutMs, unit: unit)
        ? QTBUS_OK.rawValue : QTBUS_ETIMEDOUT.rawValue
}

// MARK: - Queues

@_cdecl("qtbus_queue_main")
@usableFromInline package func _qtbus_queue_main() -> OpaquePointer {
    OpaquePointer(mainQueue)
}

@_cdecl("qtbus_queue_create")
@usableFromInline package func _qtbus_queue_create(_ label: UnsafePointer<CChar>?) -> OpaquePointer? {
    entryPoint("qtbus_queue_create", making: { makeQueue(label: label).map { OpaquePointer($0) } })
}

@_cdecl("qtbus_queue_release")
@usableFromInline package func _qtbus_queue_release(_ queue: OpaquePointer?) {
    guard let queue else { return }
    let q = UnsafeMutablePointer<Queue>(queue)
    if q.pointee.isMain { return }
    if let ring = q.ring { releaseRing(ring) }
    q.release()
}

@_cdecl("qtbus_queue_set_limit")
@usableFromInline package func _qtbus_queue_set_limit(_ queue: OpaquePointer?, _ capacity: Int, _ overflow: UInt32,
                                                    _ blockTimeoutMs: Int32) -> Int32 {
    entryPoint("qtbus_queue_set_limit",
               checks: (queue: try required(queue, "the queue is NULL"), rule: try overflowRule(overflow, capacity))) { args in
        setLimit(UnsafeMutablePointer<Queue>(args.queue), capacity: capacity, rule: args.rule,
                 blockTimeoutMs: blockTimeoutMs, runDelivery: runRingDelivery)
            ? QTBUS_OK.rawValue : fail(QTBUS_ENOMEM, "out of memory for the queue's slots")
    }
}

private func overflowRule(_ value: UInt32, _ capacity: Int) throws(QTBusStatus) -> Overflow {
    guard let rule = Overflow(rawValue: value) else {
        throw QTBusStatus(fail(QTBUS_EINVAL, "the overflow rule is not one of qtbus_overflow"))
    }
    // size_t arrives as Int: above Int.max it is negative.
    try ensure(capacity >= 0, else: fail(QTBUS_EINVAL, "the capacity is beyond what memory can hold"))
    try ensure(capacity > 0 || rule == .grow,
               else: fail(QTBUS_EINVAL, "a capacity of 0 bounds nothing: only QTBUS_OVERFLOW_GROW takes it"))
    return rule
}

@_cdecl("qtbus_queue_stats_get_sized")
@usableFromInline package func _qtbus_queue_stats_get_sized(_ queue: OpaquePointer?, _ out: UnsafeMutableRawPointer?,
                                                            _ size: Int) -> Int32 {
    // Named as the caller wrote it: the header's macro makes the call.
    entryPoint("qtbus_queue_stats_get",
               checks: (queue: try required(queue, "the queue is NULL"), out: try required(out, "out is NULL"),
                        size: try grownStructSize(size, first: 32))) { args in
        fillGrown(UnsafeMutablePointer<Queue>(args.queue).stats(), into: args.out, size: args.size)
        return QTBUS_OK.rawValue
    }
}

/// 0.2.0's entry point: its struct is the first 32 bytes of today's.
@_cdecl("qtbus_queue_stats_get")
@usableFromInline package func _qtbus_queue_stats_get(_ queue: OpaquePointer?, _ out: UnsafeMutableRawPointer?) -> Int32 {
    _qtbus_queue_stats_get_sized(queue, out, 32)
}

@_cdecl("qtbus_main_fd")
@usableFromInline package func _qtbus_main_fd() -> Int32 {
    _ = mainQueue
    return qtshim_main_queue_fd()
}

@_cdecl("qtbus_main_drain")
@usableFromInline package func _qtbus_main_drain() -> Int32 {
    entryPoint("qtbus_main_drain") { mainDrain() }
}

@_cdecl("qtbus_main_wait")
@usableFromInline package func _qtbus_main_wait(_ timeoutMs: Int32) -> Int32 {
    entryPoint("qtbus_main_wait") { mainWait(timeoutMs) }
}

// MARK: - Bags

@_cdecl("qtbus_bag_create")
@usableFromInline package func _qtbus_bag_create(_ out: UnsafeMutablePointer<qtbus_bag>?) -> Int32 {
    entryPoint("qtbus_bag_create", checks: try required(out, "bag_out is NULL")) { out in
        let id = makeBag()
        if id == 0 { return QTBUS_ENOMEM.rawValue }
        out.pointee = qtbus_bag(id: id)
        return QTBUS_OK.rawValue
    }
}

@_cdecl("qtbus_bag_add")
@usableFromInline package func _qtbus_bag_add(_ bag: qtbus_bag, _ token: qtbus_token) -> Int32 {
    entryPoint("qtbus_bag_add") { addToBag(bag.id, token.id) }
}

@_cdecl("qtbus_bag_dispose")
@usableFromInline package func _qtbus_bag_dispose(_ bag: qtbus_bag) -> Int32 {
    entryPoint("qtbus_bag_dispose") { disposeBag(bag.id) }
}

// MARK: - Subscribing

/// A QTBUS_SUB_PATTERN subscription's pattern.
private func checkPattern(_ request: SubscribeRequest) throws(QTBusStatus) {
    if let problem = patternProblem(request.type) {
        throw QTBusStatus(failPattern(request.type, problem))
    }
}

private let knownSubFlags = UInt32(QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY | QTBUS_SUB_PATTERN)

@_cdecl("qtbus_subscribe")
@usableFromInline package func _qtbus_subscribe(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                      _ options: UnsafePointer<qtbus_sub_options>?,
                      _ handler: qtbus_handler?, _ userdata: UnsafeMutableRawPointer?,
                      _ release: qtbus_release?, _ tokenOut: UnsafeMutablePointer<qtbus_token>?) -> Int32 {
    tokenOut?.pointee = qtbus_token(id: 0)
    return entryPoint("qtbus_subscribe", on: bus,
                      checks: try subscribeRequest(bus, type, options, handler, userdata, release, owner: nil)) {
        subscribe($0, storingTokenIn: tokenOut)
    }
}

/// qtbus_subscribe unreported: the Swift API's way in for owned (freeWith) subscriptions.
func subscribeChecked(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ options: UnsafePointer<qtbus_sub_options>?,
                      _ handler: qtbus_handler?, _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
                      owner: OwnerCheck?, _ tokenOut: UnsafeMutablePointer<qtbus_token>?) -> Int32 {
    tokenOut?.pointee = qtbus_token(id: 0)
    do {
        return subscribe(try subscribeRequest(bus, type, options, handler, userdata, release, owner: owner),
                         storingTokenIn: tokenOut)
    } catch {
        return error.value
    }
}

/// qtbus_subscribe's checks and conversions: the bus, and the request `subscribe` takes.
private func subscribeRequest(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                              _ options: UnsafePointer<qtbus_sub_options>?, _ handler: qtbus_handler?,
                              _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?, owner: OwnerCheck?)
    throws(QTBusStatus) -> (bus: UnsafeMutablePointer<Bus>, request: SubscribeRequest) {
    let bus = try checkedBus(bus)
    let handler = try required(handler, "the handler is NULL")
    // The type's UTF-8 is checked by `subscribe` only when it is new to the bus.
    var request = SubscribeRequest(type: try scannedName(type, .type), subtypes: Vector(), queue: nil, bag: 0,
                                   priority: 0, flags: 0, handler: handler, userdata: userdata, release: release,
                                   owner: owner)
    if let o = options?.pointee {
        try ensure(o.flags & ~knownSubFlags == 0,
                   else: fail(QTBUS_EINVAL, "unknown flag bits 0x%llx in options->flags", value: UInt64(o.flags & ~knownSubFlags)))
        do {
            try readSubtypes(o, into: &request.subtypes)
        } catch {
            request.subtypes.free()
            throw error
        }
        request.queue = o.queue.map { UnsafeMutablePointer<Queue>($0) }
        request.bag = o.bag.id
        request.priority = o.priority
        request.flags = o.flags
        if o.flags & UInt32(QTBUS_SUB_PATTERN) != 0 {
            do {
                try checkPattern(request)
            } catch {
                request.subtypes.free()
                throw error
            }
        }
    }
    return (bus, request)
}

/// options->subtypes, each once.
private func readSubtypes(_ o: qtbus_sub_options, into subtypes: inout Vector<CName>) throws(QTBusStatus) {
    guard o.subtype_count > 0 else { return }
    let names = try required(o.subtypes, "options->subtypes is NULL with a subtype_count")
    try ensure(o.subtype_count <= QTBUS_MAX_SUBTYPES,
               else: fail(QTBUS_EINVAL, "options->subtype_count is %llu (QTBUS_MAX_SUBTYPES is 64)",
                          value: UInt64(UInt(bitPattern: o.subtype_count))))
    try ensure(subtypes.reserve(o.subtype_count), else: QTBUS_ENOMEM.rawValue)
    for i in 0..<o.subtype_count {
        let name = try checkedName(names[i], .subtype)
        // Listed twice: still one node, so each event is delivered once.
        var listed = false
        subtypes.forEach { if $0.isSame(as: name) { listed = true } }
        if !listed { subtypes.appendReserved(name) }
    }
}

/// `subscribe` of a checked request, its token stored in `tokenOut`; frees the request.
private func subscribe(_ checked: (bus: UnsafeMutablePointer<Bus>, request: SubscribeRequest),
                       storingTokenIn tokenOut: UnsafeMutablePointer<qtbus_token>?) -> Int32 {
    var request = checked.request
    let result = subscribe(checked.bus, request)
    request.subtypes.free()
    if result < 0 { return Int32(result) }
    tokenOut?.pointee = qtbus_token(id: UInt64(result))
    return QTBUS_OK.rawValue
}

@_cdecl("qtbus_token_dispose")
@usableFromInline package func _qtbus_token_dispose(_ token: qtbus_token) -> Int32 {
    entryPoint("qtbus_token_dispose") { disposeToken(token.id) }
}

@_cdecl("qtbus_token_block")
@usableFromInline package func _qtbus_token_block(_ token: qtbus_token) -> Int32 {
    entryPoint("qtbus_token_block") { blockToken(token.id) }
}

@_cdecl("qtbus_token_unblock")
@usableFromInline package func _qtbus_token_unblock(_ token: qtbus_token) -> Int32 {
    entryPoint("qtbus_token_unblock") { unblockToken(token.id) }
}

@_cdecl("qtbus_token_is_active")
@usableFromInline package func _qtbus_token_is_active(_ token: qtbus_token) -> Int32 {
    tokenIsActive(token.id) ? 1 : 0
}

@_cdecl("qtbus_subscriber_count")
@usableFromInline package func _qtbus_subscriber_count(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                             _ subtype: UnsafePointer<CChar>?) -> Int32 {
    entryPoint("qtbus_subscriber_count", bus: bus, .memory,
               checks: (type: try checkedName(type, .type), subtype: try checkedOptionalName(subtype, .subtype))) {
        subscriberCount($0, $1.type, $1.subtype)
    }
}

@_cdecl("qtbus_bus_foreach")
@usableFromInline package func _qtbus_bus_foreach(_ bus: OpaquePointer?,
                                                  _ fn: (@convention(c) (UnsafePointer<qtbus_sub_info>?, UnsafeMutableRawPointer?) -> Void)?,
                                                  _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    entryPoint("qtbus_bus_foreach", bus: bus, checks: try required(fn, "fn is NULL")) {
        forEachSubscription($0, $1, userdata)
    }
}

/// Calls `fn` with each subscription of a snapshot taken in a memory section: `fn` runs
/// outside any section, on copies.  Returns the count, or the snapshot's failure.
private func forEachSubscription(_ bus: UnsafeMutablePointer<Bus>,
                                 _ fn: @convention(c) (UnsafePointer<qtbus_sub_info>?, UnsafeMutableRawPointer?) -> Void,
                                 _ userdata: UnsafeMutableRawPointer?) -> Int32 {
    switch withMemoryEpoch({ snapshotSubscriptions(bus) }) {
    case .failure(let status):
        return status.value
    case .success(let snapshot):
        for i in 0..<snapshot.count { fn(snapshot.infos + i, userdata) }
        snapshot.free()
        return Int32(clamping: snapshot.count)
    }
}

// MARK: - Tracing

/// qtbus_trace_set's `kinds`, checked against the rest of the hook it sets.
@inline(__always)
private func traceKinds(_ kinds: UInt32, _ fn: qtbus_trace_fn?, _ userdata: UnsafeMutableRawPointer?,
                        _ release: qtbus_release?) throws(QTBusStatus) -> UInt32 {
    try ensure(kinds & ~knownTraceKinds == 0,
               else: fail(QTBUS_EINVAL, "unknown bits 0x%llx in kinds", value: UInt64(kinds & ~knownTraceKinds)))
    try ensure(fn != nil || (kinds == 0 && userdata == nil && release == nil),
               else: fail(QTBUS_EINVAL, "fn is NULL (removing the hook) with kinds, userdata or a release"))
    return kinds
}

@_cdecl("qtbus_trace_set")
@usableFromInline package func _qtbus_trace_set(_ bus: OpaquePointer?, _ kinds: UInt32, _ fn: qtbus_trace_fn?,
                                                _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?) -> Int32 {
    entryPoint("qtbus_trace_set", bus: bus, checks: try traceKinds(kinds, fn, userdata, release)) {
        setTrace($0, kinds: $1, fn, userdata, release)
    }
}

// MARK: - Dispatching

private let knownEventFlags = UInt32(QTBUS_EVENT_STICKY)

/// The checks every dispatch entry point shares: the event, its names scanned.
@inline(__always)
private func outgoing(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> Outgoing {
    guard let d = desc?.pointee, let typeText = d.type, let type = CName(typeText),
          d.flags & ~knownEventFlags == 0, d.data != nil || d.size == 0 else {
        throw QTBusStatus(refuseEvent(desc))
    }
    return Outgoing(type: type, subtype: try scannedOptionalName(d.subtype, .subtype), data: d.data, size: d.size,
                    object: d.object, objectRelease: d.object_release)
}

/// Records why `outgoing` refused `desc`.  It checks again, out of line, what
/// `outgoing`'s one combined guard found wrong: a guard per reason, each recording its
/// own, cost every dispatch more (docs/perf-notes.md, "One guard for a refused event").
/// `readsType`: false for
/// qtbus_dispatch_id, which does not read event->type.
@inline(never)
private func refuseEvent(_ desc: UnsafePointer<qtbus_event_desc>?, readsType: Bool = true) -> Int32 {
    guard let d = desc?.pointee else { return failNull("the event is NULL") }
    if readsType && (d.type == nil || CName(d.type!) == nil) { return failName(d.type, .type) }
    if d.flags & ~knownEventFlags != 0 {
        return fail(QTBUS_EINVAL, "unknown flag bits 0x%llx in event->flags", value: UInt64(d.flags & ~knownEventFlags))
    }
    return fail(QTBUS_EINVAL, "event->data is NULL with a size of %llu", value: UInt64(UInt(bitPattern: d.size)))
}

/// As `outgoing` checks, but the type is the id's (qtbus_dispatch_id): event->type is
/// not read.  Returns the subtype, scanned.
@inline(__always)
private func checkedById(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> CName? {
    guard let d = desc?.pointee, d.flags & ~knownEventFlags == 0, d.data != nil || d.size == 0 else {
        throw QTBusStatus(refuseEvent(desc, readsType: false))
    }
    return try scannedOptionalName(d.subtype, .subtype)
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
private func ensureUTF8(_ event: Outgoing, of desc: UnsafePointer<qtbus_event_desc>) throws(QTBusStatus) {
    try ensure(event.type.isValidUTF8, else: failName(desc.pointee.type, .type))
    try ensure(event.subtype?.isValidUTF8 ?? true, else: failName(desc.pointee.subtype, .subtype))
}

/// As `outgoing` checks, but the type is only measured (`CName.measured`): its hash is
/// made only when the thread's last-dispatched type is not it (`dispatchNamed`).
@inline(__always)
private func outgoingNamed(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> (type: CName, subtype: CName?) {
    guard let d = desc?.pointee, let typeText = d.type, let type = CName(measuring: typeText),
          d.flags & ~knownEventFlags == 0, d.data != nil || d.size == 0 else {
        throw QTBusStatus(refuseEvent(desc))
    }
    return (type, try scannedOptionalName(d.subtype, .subtype))
}

@_cdecl("qtbus_dispatch")
@usableFromInline package func _qtbus_dispatch(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    dispatchEntryPoint("qtbus_dispatch", bus: bus, checks: try outgoingNamed(desc)) { bus, names, record in
        let d = desc.unsafelyUnwrapped.pointee
        var event = Outgoing(type: names.type, subtype: names.subtype, data: d.data, size: d.size,
                             object: d.object, objectRelease: d.object_release)
        return dispatchNamed(bus, &event, flags: d.flags, record)
    }
}

@_cdecl("qtbus_type_lookup")
@usableFromInline package func _qtbus_type_lookup(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                                                  _ out: UnsafeMutablePointer<qtbus_type_id>?) -> Int32 {
    out?.pointee = qtbus_type_id(id: 0)
    return entryPoint("qtbus_type_lookup", bus: bus,
                      checks: (out: try required(out, "out is NULL"), type: try checkedName(type, .type))) {
        var id: UInt64 = 0
        let status = lookupTypeId($0, $1.type, &id)
        if status == QTBUS_OK.rawValue { $1.out.pointee = qtbus_type_id(id: id) }
        return status
    }
}

@_cdecl("qtbus_dispatch_id")
@usableFromInline package func _qtbus_dispatch_id(_ bus: OpaquePointer?, _ type: qtbus_type_id,
                                                  _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    entryPoint("qtbus_dispatch_id", bus: bus, .dispatch, checks: try checkedById(desc)) { bus, subtype in
        dispatchById(bus, type.id, desc.unsafelyUnwrapped, subtype)
    }
}

/// qtbus_dispatch_on_bus_queue and qtbus_dispatch_on_main: the event copied, its
/// dispatch posted to the queue `queue` picks.
@inline(__always)
private func post(_ function: StaticString, _ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?,
                  _ queue: (UnsafeMutablePointer<Bus>) -> qtshim_dispatch_queue_t, isMain: Bool) -> Int32 {
    // In a memory section: a concurrent destroy cannot free the bus between the check
    // and the pin.
    entryPoint(function, bus: bus, .memory, checks: try copiedOutgoing(desc)) {
        postCopy($0, $1, flags: desc.unsafelyUnwrapped.pointee.flags, queue, isMain: isMain)
    }
}

@_cdecl("qtbus_dispatch_on_bus_queue")
@usableFromInline package func _qtbus_dispatch_on_bus_queue(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    post("qtbus_dispatch_on_bus_queue", bus, desc, { $0.pointee.queue }, isMain: false)
}

@_cdecl("qtbus_dispatch_on_main")
@usableFromInline package func _qtbus_dispatch_on_main(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?) -> Int32 {
    post("qtbus_dispatch_on_main", bus, desc, { _ in mainQueue.pointee.dq }, isMain: true)
}

private let jsonTypeName = StaticName(qtshim_json_type())

/// qtbus_dispatch_json's event: the JSON text, checked, under `name`.
@inline(__always)
private func jsonEvent(_ name: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) throws(QTBusStatus) -> Outgoing {
    let name = try checkedName(name, .name)
    let json = try required(json, "the JSON text is NULL")
    let size = strlen(json)
    try ensure(_isValidJSON(UnsafeRawBufferPointer(start: json, count: size)),
               else: fail(QTBUS_EJSON, "the text is not JSON (RFC 8259, nesting up to QTBUS_JSON_MAX_DEPTH)"))
    return Outgoing(type: jsonTypeName.name, subtype: name, data: json, size: size, object: nil, objectRelease: nil)
}

@_cdecl("qtbus_dispatch_json")
@usableFromInline package func _qtbus_dispatch_json(_ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ json: UnsafePointer<CChar>?) -> Int32 {
    entryPoint("qtbus_dispatch_json", bus: bus, .dispatch, checks: try jsonEvent(name, json)) {
        dispatchEvent($0, &$1, flags: 0)
    }
}

@_cdecl("qtbus_sticky_clear")
@usableFromInline package func _qtbus_sticky_clear(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ subtype: UnsafePointer<CChar>?) -> Int32 {
    entryPoint("qtbus_sticky_clear", bus: bus, .memory,
               checks: (type: try checkedName(type, .type), subtype: try checkedOptionalName(subtype, .subtype))) {
        clearSticky($0, $1.type, $1.subtype)
    }
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

/// qtbus_event_stop's event: one whose dispatch is still running.
@inline(__always)
private func stoppable(_ event: OpaquePointer?) throws(QTBusStatus) -> UnsafeMutablePointer<EventView> {
    let v = try checkedEvent(event)
    try ensure(!v.pointee.queued, else: fail(QTBUS_EINVAL, "the event is delivered after its dispatch returned (queued or replayed): there is nothing left to stop"))
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

// MARK: - Request and reply

/// qtbus_request's event: as a dispatch's, but never sticky.
@inline(__always)
private func requestEvent(_ desc: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> Outgoing {
    let event = try outgoing(desc)
    try ensure(desc.unsafelyUnwrapped.pointee.flags & knownEventFlags == 0,
               else: fail(QTBUS_EINVAL, "a request cannot be sticky (QTBUS_EVENT_STICKY)"))
    return event
}

@_cdecl("qtbus_request")
@usableFromInline package func _qtbus_request(_ bus: OpaquePointer?, _ desc: UnsafePointer<qtbus_event_desc>?,
                           _ onReply: qtbus_reply_handler?, _ userdata: UnsafeMutableRawPointer?,
                           _ release: qtbus_release?) -> Int32 {
    entryPoint("qtbus_request", bus: bus, checks: try requestEvent(desc)) {
        sendRequest($0, &$1, onReply: onReply, userdata: userdata, release: release)
    }
}

@_cdecl("qtbus_event_reply")
@usableFromInline package func _qtbus_event_reply(_ event: OpaquePointer?, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    entryPoint("qtbus_event_reply", checks: try checkedEvent(event)) { replyTo($0, data, size) }
}

@_cdecl("qtbus_event_defer")
@usableFromInline package func _qtbus_event_defer(_ event: OpaquePointer?, _ out: UnsafeMutablePointer<qtbus_deferred>?) -> Int32 {
    out?.pointee = qtbus_deferred(id: 0)
    return entryPoint("qtbus_event_defer",
                      checks: (event: try checkedEvent(event), out: try required(out, "out is NULL"))) {
        var id: UInt64 = 0
        let status = deferReply($0.event, &id)
        $0.out.pointee = qtbus_deferred(id: id)
        return status
    }
}

@_cdecl("qtbus_deferred_reply")
@usableFromInline package func _qtbus_deferred_reply(_ deferred: qtbus_deferred, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    entryPoint("qtbus_deferred_reply") { deferredReply(deferred.id, data, size) }
}

@_cdecl("qtbus_deferred_finish")
@usableFromInline package func _qtbus_deferred_finish(_ deferred: qtbus_deferred) -> Int32 {
    entryPoint("qtbus_deferred_finish") { finishDeferred(deferred.id) }
}

// MARK: - Commands

private let knownCommandFlags = UInt32(QTBUS_COMMAND_CONCURRENT)

@_cdecl("qtbus_command_create")
@usableFromInline package func _qtbus_command_create(_ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ flags: UInt32,
                                  _ execute: qtbus_execute_fn?, _ userdata: UnsafeMutableRawPointer?,
                                  _ release: qtbus_release?, _ out: UnsafeMutablePointer<qtbus_command>?) -> Int32 {
    out?.pointee = qtbus_command(id: 0)
    return entryPoint("qtbus_command_create", bus: bus,
                      checks: (name: try checkedName(name, .name),
                               execute: try required(execute, "the execute function is NULL"),
                               out: try required(out, "command_out is NULL"),
                               flags: try knownFlags(flags, knownCommandFlags))) {
        stored(makeCommand($0, $1.name, concurrent: $1.flags != 0, $1.execute, userdata, release),
               in: $1.out, qtbus_command.init(id:))
    }
}

/// qtbus_command_execute's input, checked in full: it is not looked up in any table.
@inline(__always)
private func commandInput(_ input: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> Outgoing? {
    guard let input else { return nil }
    let event = try outgoing(input)
    try ensure(input.pointee.flags == 0, else: fail(QTBUS_EINVAL, "an input cannot be sticky (input->flags)"))
    try ensureUTF8(event, of: input)
    return event
}

@_cdecl("qtbus_command_execute")
@usableFromInline package func _qtbus_command_execute(_ command: qtbus_command, _ input: UnsafePointer<qtbus_event_desc>?,
                                   _ queue: OpaquePointer?) -> Int32 {
    entryPoint("qtbus_command_execute",
               checks: (input: try commandInput(input), queue: queue.map { UnsafeMutablePointer<Queue>($0) })) {
        executeCommand(command.id, &$0.input, $0.queue)
    }
}

@_cdecl("qtbus_command_set_enabled")
@usableFromInline package func _qtbus_command_set_enabled(_ command: qtbus_command, _ enabled: Int32) -> Int32 {
    entryPoint("qtbus_command_set_enabled") { setCommandEnabled(command.id, enabled != 0) }
}

@_cdecl("qtbus_command_is_executing")
@usableFromInline package func _qtbus_command_is_executing(_ command: qtbus_command) -> Int32 {
    entryPoint("qtbus_command_is_executing") { queryCommand(command.id, executing: true) }
}

@_cdecl("qtbus_command_is_enabled")
@usableFromInline package func _qtbus_command_is_enabled(_ command: qtbus_command) -> Int32 {
    entryPoint("qtbus_command_is_enabled") { queryCommand(command.id, executing: false) }
}

/// Bytes given as a pointer and a size: NULL only with a size of 0.
@inline(__always)
private func bytes(_ data: UnsafeRawPointer?, _ size: Int) throws(QTBusStatus) -> UnsafeRawPointer? {
    try ensure(data != nil || size == 0,
               else: fail(QTBUS_EINVAL, "data is NULL with a size of %llu", value: UInt64(UInt(bitPattern: size))))
    return data
}

@_cdecl("qtbus_execution_send")
@usableFromInline package func _qtbus_execution_send(_ execution: qtbus_execution, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    entryPoint("qtbus_execution_send", checks: try bytes(data, size)) { sendFromExecution(execution.id, $0, size) }
}

@_cdecl("qtbus_execution_finish")
@usableFromInline package func _qtbus_execution_finish(_ execution: qtbus_execution, _ error: Int32,
                                    _ message: UnsafePointer<CChar>?) -> Int32 {
    entryPoint("qtbus_execution_finish") { finishExecution(execution.id, error, message) }
}

@_cdecl("qtbus_command_dispose")
@usableFromInline package func _qtbus_command_dispose(_ command: qtbus_command) -> Int32 {
    entryPoint("qtbus_command_dispose") { disposeCommand(command.id) }
}

// MARK: - Shared sources

private let knownSourceFlags = UInt32(QTBUS_SOURCE_AUTOCONNECT)

@_cdecl("qtbus_source_create")
@usableFromInline package func _qtbus_source_create(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ flags: UInt32,
                                 _ start: qtbus_source_start?, _ stop: qtbus_source_stop?,
                                 _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
                                 _ out: UnsafeMutablePointer<qtbus_source>?) -> Int32 {
    out?.pointee = qtbus_source(id: 0)
    return entryPoint("qtbus_source_create", bus: bus,
                      checks: (type: try checkedName(type, .type),
                               start: try required(start, "the start function is NULL"),
                               out: try required(out, "source_out is NULL"),
                               flags: try knownFlags(flags, knownSourceFlags))) {
        stored(makeSource($0, $1.type, autoconnect: $1.flags != 0, $1.start, stop, userdata, release),
               in: $1.out, qtbus_source.init(id:))
    }
}

@_cdecl("qtbus_source_connect")
@usableFromInline package func _qtbus_source_connect(_ source: qtbus_source) -> Int32 {
    entryPoint("qtbus_source_connect") { setSourceConnected(source.id, true) }
}

@_cdecl("qtbus_source_disconnect")
@usableFromInline package func _qtbus_source_disconnect(_ source: qtbus_source) -> Int32 {
    entryPoint("qtbus_source_disconnect") { setSourceConnected(source.id, false) }
}

@_cdecl("qtbus_source_dispose")
@usableFromInline package func _qtbus_source_dispose(_ source: qtbus_source) -> Int32 {
    entryPoint("qtbus_source_dispose") { disposeSource(source.id) }
}
