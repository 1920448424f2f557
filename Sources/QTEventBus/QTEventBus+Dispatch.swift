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
    /// - Returns: the number of subscriptions that ran or were posted (0 when nobody
    ///   subscribes), or a negative engine status (``QTBusError/rawValue``) when the
    ///   event could not be dispatched: an empty or over-long (> 255 bytes) subtype, or
    ///   an invalid ``QTEvent/eventName`` (``QTBusError/invalidArgument``).
    @inlinable
    @discardableResult
    public func dispatch<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        Int(_send(event, flags: sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, mode: .now))
    }

    /// Posts `event` to this bus's own serial queue, which then dispatches it as
    /// ``dispatch(_:sticky:)`` would; returns at once. Posts are delivered in the order
    /// they were made.
    ///
    /// - Returns: 0, or a negative engine status (see ``dispatch(_:sticky:)``).
    @inlinable
    @discardableResult
    public func dispatchOnBusQueue<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        Int(_send(event, flags: sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, mode: .busQueue))
    }

    /// Posts `event` to the main queue (`DispatchQueue.main`, which C programs drain
    /// with `qtbus_main_drain`), where it is dispatched as ``dispatch(_:sticky:)``
    /// would; returns at once.
    ///
    /// - Returns: 0, or a negative engine status (see ``dispatch(_:sticky:)``).
    @inlinable
    @discardableResult
    public func dispatchOnMain<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        Int(_send(event, flags: sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, mode: .main))
    }

    @inlinable
    func _send<E: QTEvent>(_ event: E, flags: UInt32, mode: _QTSendMode) -> Int32 {
        let record = _QTTypeTable.record(for: E.self)
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
            return _qtSend(raw, cName, nil, nil, 0, cell, borrowed, typeId, flags, mode)
        }
        return subType.withCString { _qtSend(raw, cName, $0, nil, 0, cell, borrowed, typeId, flags, mode) }
    }

    // MARK: Named events

    /// Dispatches an event of the named type `type` (as C's `qtbus_dispatch` does), with
    /// `bytes` as its data, NUL-terminated for C readers (the NUL is not counted).
    /// C subscribers and ``on(named:)`` subscribers receive it; typed subscribers whose
    /// ``QTEvent/eventName`` is `type` receive it if their type is a ``QTBytesEvent``
    /// that decodes it.
    ///
    /// - Returns: as ``dispatch(_:sticky:)``.
    @discardableResult
    public func dispatch(named type: String, subType: String? = nil, bytes: [UInt8] = [],
                         sticky: Bool = false) -> Int {
        Int(type.withCString { cName in
            _qtSendBytes(raw, cName, subType, bytes, nil, false, 0, sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, .now)
        })
    }

    /// Dispatches the JSON text `json` under the name `name` (C's `qtbus_dispatch_json`):
    /// an event of type ``jsonTypeName`` whose subtype is `name` and whose bytes are the
    /// text. C's `QTBUS_SUB_JSON(bag, name, ...)` and Swift's
    /// `on(named: QTEventBus.jsonTypeName).ofSubType(name)` receive it (as does
    /// `QTJsonEvent` of QTEventBusFoundation).
    ///
    /// - Returns: the number of subscriptions reached.
    /// - Throws: ``QTBusError/invalidJSON`` when `json` is not JSON (RFC 8259; nothing is
    ///   delivered), ``QTBusError/invalidArgument`` for an invalid name.
    @discardableResult
    public func dispatchJSON(name: String, json: String) throws(QTBusError) -> Int {
        let before = QTBusError.failuresSoFar
        let status = name.withCString { n in json.withCString { j in _qtbus_dispatch_json(raw, n, j) } }
        if let error = QTBusError(status: status, since: before) { throw error }
        return Int(status)
    }
}

/// Sends with `bytes` as the data, NUL-terminated (not counted).
@usableFromInline
func _qtSendBytes(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: String?, _ bytes: [UInt8],
                  _ object: UnsafeMutableRawPointer?, _ borrowed: Bool, _ typeId: UInt64, _ flags: UInt32,
                  _ mode: _QTSendMode) -> Int32 {
    _withNULTerminated(bytes) { base, count in
        guard let subType else { return _qtSend(bus, type, nil, base, count, object, borrowed, typeId, flags, mode) }
        return subType.withCString { _qtSend(bus, type, $0, base, count, object, borrowed, typeId, flags, mode) }
    }
}

/// The one call into the engine's dispatch entry points. A `borrowed` cell (on the
/// caller's stack, `.now` only) goes to `_qtEngineDispatchBorrowed`, which copies it if
/// a delivery outlives the call, with `typeId` (0: none) standing for `type`; the engine
/// owns any other cell once the dispatch succeeds, and on failure it took nothing, so
/// the cell is freed here.
@usableFromInline
func _qtSend(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: UnsafePointer<CChar>?,
             _ data: UnsafeRawPointer?, _ size: Int, _ object: UnsafeMutableRawPointer?, _ borrowed: Bool,
             _ typeId: UInt64, _ flags: UInt32, _ mode: _QTSendMode) -> Int32 {
    if borrowed, let object {
        return _qtEngineDispatchBorrowed(bus, typeId: typeId, type: type, subtype: subType, data: data, size: size, object: object,
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
