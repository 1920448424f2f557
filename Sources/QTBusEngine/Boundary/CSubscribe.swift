// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Subscribing" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

/// A QTBUS_SUB_PATTERN subscription's pattern.
private func checkPattern(_ request: SubscribeRequest) throws(QTBusStatus) {
    if let problem = patternProblem(request.type) {
        throw QTBusStatus(failPattern(request.type, problem))
    }
}

private let knownSubFlags = UInt32(QTBUS_SUB_ONCE | QTBUS_SUB_REPLAY | QTBUS_SUB_PATTERN)

@_cdecl("qtbus_subscribe")
@usableFromInline package func _qtbus_subscribe(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ options: UnsafePointer<qtbus_sub_options>?,
    _ handler: qtbus_handler?, _ userdata: UnsafeMutableRawPointer?,
    _ release: qtbus_release?, _ tokenOut: UnsafeMutablePointer<qtbus_token>?
) -> Int32 {
    tokenOut?.pointee = qtbus_token(id: 0)
    return entryPoint(
        "qtbus_subscribe", on: bus,
        checks: try subscribeRequest(bus, type, options, handler, userdata, release, owner: nil)
    ) {
        subscribe($0, storingTokenIn: tokenOut)
    }
}

/// qtbus_subscribe unreported: the Swift API's way in for owned (freeWith) subscriptions.
func subscribeChecked(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ options: UnsafePointer<qtbus_sub_options>?,
    _ handler: qtbus_handler?, _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
    owner: OwnerCheck?, _ tokenOut: UnsafeMutablePointer<qtbus_token>?
) -> Int32 {
    tokenOut?.pointee = qtbus_token(id: 0)
    do {
        return subscribe(
            try subscribeRequest(bus, type, options, handler, userdata, release, owner: owner),
            storingTokenIn: tokenOut)
    } catch {
        return error.value
    }
}

/// qtbus_subscribe's checks and conversions: the bus, and the request `subscribe` takes.
private func subscribeRequest(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ options: UnsafePointer<qtbus_sub_options>?, _ handler: qtbus_handler?,
    _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?, owner: OwnerCheck?
)
    throws(QTBusStatus) -> (bus: UnsafeMutablePointer<Bus>, request: SubscribeRequest)
{
    let bus = try checkedBus(bus)
    let handler = try required(handler, "the handler is NULL")
    // The type's UTF-8 is checked by `subscribe` only when it is new to the bus.
    var request = SubscribeRequest(
        type: try scannedName(type, .type), subtypes: Vector(), queue: nil, bag: 0,
        priority: 0, flags: 0, handler: handler, userdata: userdata, release: release,
        owner: owner)
    if let o = options?.pointee {
        try ensure(
            o.flags & ~knownSubFlags == 0,
            else: fail(
                QTBUS_EINVAL, "unknown flag bits 0x%llx in options->flags", value: UInt64(o.flags & ~knownSubFlags)))
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
    try ensure(
        o.subtype_count <= QTBUS_MAX_SUBTYPES,
        else: fail(
            QTBUS_EINVAL, "options->subtype_count is %llu (QTBUS_MAX_SUBTYPES is 64)",
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
private func subscribe(
    _ checked: (bus: UnsafeMutablePointer<Bus>, request: SubscribeRequest),
    storingTokenIn tokenOut: UnsafeMutablePointer<qtbus_token>?
) -> Int32 {
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
@usableFromInline package func _qtbus_subscriber_count(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ subtype: UnsafePointer<CChar>?
) -> Int32 {
    entryPoint(
        "qtbus_subscriber_count", bus: bus, .memory,
        checks: (type: try checkedName(type, .type), subtype: try checkedOptionalName(subtype, .subtype))
    ) {
        subscriberCount($0, $1.type, $1.subtype)
    }
}

@_cdecl("qtbus_bus_foreach")
@usableFromInline package func _qtbus_bus_foreach(
    _ bus: OpaquePointer?,
    _ fn: (@convention(c) (UnsafePointer<qtbus_sub_info>?, UnsafeMutableRawPointer?) -> Void)?,
    _ userdata: UnsafeMutableRawPointer?
) -> Int32 {
    entryPoint("qtbus_bus_foreach", bus: bus, checks: try required(fn, "fn is NULL")) {
        forEachSubscription($0, $1, userdata)
    }
}

/// Calls `fn` with each subscription of a snapshot taken in a memory section: `fn` runs
/// outside any section, on copies.  Returns the count, or the snapshot's failure.
private func forEachSubscription(
    _ bus: UnsafeMutablePointer<Bus>,
    _ fn: @convention(c) (UnsafePointer<qtbus_sub_info>?, UnsafeMutableRawPointer?) -> Void,
    _ userdata: UnsafeMutableRawPointer?
) -> Int32 {
    switch withMemoryEpoch({ snapshotSubscriptions(bus) }) {
    case .failure(let status):
        return status.value
    case .success(let snapshot):
        for i in 0..<snapshot.count { fn(snapshot.infos + i, userdata) }
        snapshot.free()
        return Int32(clamping: snapshot.count)
    }
}
