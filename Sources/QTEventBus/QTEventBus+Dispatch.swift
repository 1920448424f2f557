// Dispatching: typed events (the hot path), named events and JSON.
//
// The typed path is @inlinable so that it is specialized for the event type in the
// caller's module: the metatype lookup, the bytes check and the subtype read then
// compile to a few loads. A synchronous dispatch allocates nothing: the event cell is
// on its stack, lent to the engine, which copies it only for deliveries that outlive
// the call (_EventCell.swift); a subtype of up to 15 UTF-8 bytes is passed from the
// stack, longer native strings in place. It takes no lock and builds no C string for
// the type name (the record caches it). The engine call is the Swift-only
// `_qtEngineDispatchBorrowed`, which runs the same dispatch as C's `qtbus_dispatch`;
// posted dispatches use C's `qtbus_dispatch_on_bus_queue` / `_on_main`.
import CQtbusShims
import Glibc
import QTBusEngine

/// Where a dispatch runs.
@usableFromInline
enum _QTSendMode {
    case now, busQueue, main
}

extension QTEventBus {
    /// Dispatches `event` to every matching subscription, now, on this thread:
    /// handlers without a queue have run when it returns; `atQueue` handlers have been
    /// posted to their queues.
    ///
    /// With `sticky: true` the bus also keeps the event as the last of its type and
    /// subtype, and ``QTEventSubscriberMaker/replay()`` subscriptions made later receive
    /// it first, until a newer sticky event replaces it or
    /// ``removeSticky(_:subType:)`` drops it.
    ///
    /// An event nobody receives is dispatched as ``noSubscriberTypeName`` instead. If
    /// `E` is a ``QTBytesEvent``, C subscribers of the type read its bytes.
    ///
    /// An event whose ``QTEvent/eventSubType`` or ``QTEvent/eventName`` is not a valid
    /// name (``isValidName(_:)``: empty, longer than 255 bytes, or holding a NUL byte) is
    /// a programmer error: the call traps, naming the name and why.
    ///
    /// - Returns: the number of subscriptions that ran or were posted (0 when nobody
    ///   subscribes). A count, never a refusal.
    @inlinable
    @discardableResult
    public func dispatch<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        let status = _send(event, flags: sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, mode: .now)
        if _slowPath(status < 0) { _qtRefusedDispatch(event, status, .now) }
        return Int(status)
    }

    /// Posts `event` to this bus's own serial queue, which then dispatches it as
    /// ``dispatch(_:sticky:)`` would; returns at once. Posts are delivered in the order
    /// they were made. An invalid name traps, as in ``dispatch(_:sticky:)``.
    ///
    /// - Returns: 0 (the subscriptions are reached later, on the bus's queue).
    @inlinable
    @discardableResult
    public func dispatchOnBusQueue<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        let status = _send(event, flags: sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, mode: .busQueue)
        if _slowPath(status < 0) { _qtRefusedDispatch(event, status, .busQueue) }
        return Int(status)
    }

    /// Posts `event` to the main queue (`DispatchQueue.main`, which C programs drain
    /// with `qtbus_main_drain`), where it is dispatched as ``dispatch(_:sticky:)``
    /// would; returns at once. An invalid name traps, as in ``dispatch(_:sticky:)``.
    ///
    /// - Returns: 0 (the subscriptions are reached later, on the main queue).
    @inlinable
    @discardableResult
    public func dispatchOnMain<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        let status = _send(event, flags: sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, mode: .main)
        if _slowPath(status < 0) { _qtRefusedDispatch(event, status, .main) }
        return Int(status)
    }

    @inlinable
    func _send<E: QTEvent>(_ event: E, flags: UInt32, mode: _QTSendMode) -> Int32 {
        let record = _QTTypeTable.record(for: E.self)
        // An invalid eventName: `_qtRefusedDispatch` says so.
        guard let cName = record.pointee.cName else { return QTBUS_EINVAL.rawValue }
        let isBytes = record.pointee.isBytes
        guard mode == .now else {
            // Posted: the whole event outlives this call, so its cell is on the heap.
            return _qtSendCell(event, isBytes, cName, _qtMakeCell(event), borrowed: false, typeId: 0, flags, mode)
        }
        // Synchronous: the cell lives in this frame and the engine borrows it; it asks
        // `_qtEventCellCopy` for a heap copy only if a delivery outlives the call. The
        // type goes by its id on this bus (`_TypeIds.swift`).
        let typeId = typeIds.id(record, bus: raw)
        return withUnsafeTemporaryAllocation(byteCount: _qtCellByteCount(E.self),
                                             alignment: max(16, MemoryLayout<E>.alignment)) { buffer in
            let cell = buffer.baseAddress.unsafelyUnwrapped
            _qtInitializeCell(cell, event)
            defer { (cell + _qtCellValueOffset(E.self)).assumingMemoryBound(to: E.self).deinitialize(count: 1) }
            return _qtSendCell(event, isBytes, cName, cell, borrowed: true, typeId: typeId, flags, mode)
        }
    }

    @inlinable
    func _qtSendCell<E: QTEvent>(_ event: E, _ isBytes: Bool, _ cName: UnsafePointer<CChar>,
                                 _ cell: UnsafeMutableRawPointer, borrowed: Bool, typeId: UInt64, _ flags: UInt32,
                                 _ mode: _QTSendMode) -> Int32 {
        if isBytes, let bytesEvent = event as? any QTBytesEvent {
            return _qtSendBytes(raw, cName, event.eventSubType, bytesEvent.eventBytes, cell, borrowed, typeId, flags, mode)
        }
        guard let subType = event.eventSubType else {
            return _qtSend(raw, cName, nil, 0, nil, 0, cell, borrowed, typeId, flags, mode)
        }
        return _qtWithSubType(subType, borrowed) { _qtSend(raw, cName, $0, $1, nil, 0, cell, borrowed, typeId, flags, mode) }
            ?? _qtRefuseUnsent(cell, borrowed)
    }

    // MARK: Named events

    /// Dispatches an event of the named type `type` (as C's `qtbus_dispatch` does), with
    /// `bytes` as its data, NUL-terminated for C readers (the NUL is not counted).
    /// C subscribers and ``on(named:)`` subscribers receive it; typed subscribers whose
    /// ``QTEvent/eventName`` is `type` receive it if their type is a ``QTBytesEvent``
    /// that decodes it. An invalid `type` or `subType` (``isValidName(_:)``) traps.
    ///
    /// - Returns: as ``dispatch(_:sticky:)``.
    @discardableResult
    public func dispatch(named type: String, subType: String? = nil, bytes: [UInt8] = [],
                         sticky: Bool = false) -> Int {
        let call = "dispatch(named:subType:bytes:sticky:)"
        _qtRequireName(type, .type, call)
        if let subType { _qtRequireName(subType, .subtype, call) }
        let status = type.withCString { cName in
            _qtSendBytes(raw, cName, subType, bytes, nil, false, 0, sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, .now)
        }
        if status < 0 { _qtRefused(call, status) }
        return Int(status)
    }

    /// Dispatches the JSON text `json` under the name `name` (C's `qtbus_dispatch_json`):
    /// an event of type ``jsonTypeName`` whose subtype is `name` and whose bytes are the
    /// text. C's `QTBUS_SUB_JSON(bag, name, ...)` and Swift's
    /// `on(named: QTEventBus.jsonTypeName).ofSubType(name)` receive it (as does
    /// `QTJsonEvent` of QTEventBusFoundation).
    ///
    /// The text is data, which may come from anywhere: text that is not JSON is a
    /// refusal, thrown. The name is the program's: an invalid one
    /// (``isValidName(_:)``) traps.
    ///
    /// - Returns: the number of subscriptions reached.
    /// - Throws: ``QTBusError/invalidJSON`` when `json` is not JSON (RFC 8259; a NUL
    ///   byte included) and nothing was delivered; ``QTBusError/outOfMemory``.
    @discardableResult
    public func dispatchJSON(name: String, json: String) throws(QTBusError) -> Int {
        let call = "dispatchJSON(name:json:)"
        _qtRequireName(name, .name, call)
        let before = QTBusError.failuresSoFar
        // A NUL would end the C string early, and the engine would check and deliver
        // only the text before it; JSON text has no NUL byte (RFC 8259).
        let status = name.withCString { n in _qtWithCName(json) { j in _qtbus_dispatch_json(raw, n, j) } }
        guard let status else {
            throw QTBusError(.invalidJSON, message: "\(call): the text is not JSON (it contains a NUL byte)")
        }
        try _qtThrowing(status, since: before, call)
        return Int(status)
    }
}

/// The refusal of a typed dispatch, `mode`'s: the programmer error (an invalid subtype or
/// type name) or what the engine said; traps. Out of line, off the hot path.
@usableFromInline @inline(never)
func _qtRefusedDispatch<E: QTEvent>(_ event: E, _ status: Int32, _ mode: _QTSendMode) -> Never {
    let call: String
    switch mode {
    case .now: call = "dispatch(_:sticky:)"
    case .busQueue: call = "dispatchOnBusQueue(_:sticky:)"
    case .main: call = "dispatchOnMain(_:sticky:)"
    }
    _ = _qtRequireTypeName(E.self, call)
    let ofType = "\(call) of \(String(reflecting: E.self))"
    if let subType = event.eventSubType { _qtRequireName(subType, .subtype, ofType) }
    _qtRefused(ofType, status)
}

/// A refusal before the engine call (a name holding a NUL byte): the engine took nothing,
/// so a cell that is not borrowed is freed here, and the caller reports it.
@usableFromInline
func _qtRefuseUnsent(_ cell: UnsafeMutableRawPointer?, _ borrowed: Bool) -> Int32 {
    if !borrowed, let cell { _qtFreeCell(cell) }
    return QTBUS_EINVAL.rawValue
}

/// Calls `body` with `name` as a C string, or returns nil when `name` holds a NUL byte:
/// the C string would end there, and the engine would take the shorter name for it.
/// Costs a `strlen` of the copy `withCString` makes anyway.
@inlinable @inline(__always)
func _qtWithCName<R>(_ name: String, _ body: (UnsafePointer<CChar>) -> R) -> R? {
    name.withCString { c in strlen(c) == name.utf8.count ? body(c) : nil }
}

/// `_qtWithCName` for a dispatch's subtype, with its UTF-8 length. A borrowed dispatch
/// (`_qtEngineDispatchBorrowed`) leaves the NUL check to the engine, which compares the
/// length with the one it measures anyway: the synchronous dispatch, the hot path, then
/// makes no second `strlen` (30 instructions of about 700 a dispatch with a subtype).
@inlinable @inline(__always)
func _qtWithSubType<R>(_ subType: String, _ borrowed: Bool, _ body: (UnsafePointer<CChar>, Int) -> R) -> R? {
    let length = subType.utf8.count
    if borrowed { return subType.withCString { body($0, length) } }
    return _qtWithCName(subType) { body($0, length) }
}

/// Sends with `bytes` as the data, NUL-terminated (not counted).
@usableFromInline
func _qtSendBytes(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: String?, _ bytes: [UInt8],
                  _ object: UnsafeMutableRawPointer?, _ borrowed: Bool, _ typeId: UInt64, _ flags: UInt32,
                  _ mode: _QTSendMode) -> Int32 {
    _withNULTerminated(bytes) { base, count in
        guard let subType else { return _qtSend(bus, type, nil, 0, base, count, object, borrowed, typeId, flags, mode) }
        return _qtWithSubType(subType, borrowed && object != nil) {
            _qtSend(bus, type, $0, $1, base, count, object, borrowed, typeId, flags, mode)
        } ?? _qtRefuseUnsent(object, borrowed)
    }
}

/// The one call into the engine's dispatch entry points. A `borrowed` cell (on the
/// caller's stack, `.now` only) goes to `_qtEngineDispatchBorrowed`, which copies it if
/// a delivery outlives the call, with `typeId` (0: none) standing for `type`, and checks
/// the subtype against `subTypeLength` (its Swift string's UTF-8 length); the engine
/// owns any other cell once the dispatch succeeds, and on failure it took nothing, so
/// the cell is freed here.
@usableFromInline
func _qtSend(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: UnsafePointer<CChar>?, _ subTypeLength: Int,
             _ data: UnsafeRawPointer?, _ size: Int, _ object: UnsafeMutableRawPointer?, _ borrowed: Bool,
             _ typeId: UInt64, _ flags: UInt32, _ mode: _QTSendMode) -> Int32 {
    if borrowed, let object {
        return _qtEngineDispatchBorrowed(bus, typeId: typeId, type: type, subtype: subType, subtypeLength: subTypeLength,
                                        data: data, size: size, object: object,
                                        copy: _qtEventCellCopy, release: _qtEventCellRelease, flags: flags)
    }
    var desc = qtbus_event_desc(type: type, subtype: subType, data: data, size: size, object: object,
                                object_release: object == nil ? nil : _qtEventCellRelease, flags: flags)
    let status: Int32
    switch mode {
    case .now: status = _qtbus_dispatch(bus, &desc)
    case .busQueue: status = _qtbus_dispatch_on_bus_queue(bus, &desc)
    case .main: status = _qtbus_dispatch_on_main(bus, &desc)
    }
    if status < 0, let object { _qtFreeCell(object) }
    return status
}
