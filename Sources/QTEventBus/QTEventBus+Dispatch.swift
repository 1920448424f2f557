// Dispatching: typed events (the hot path), named events and JSON.
//
// The typed path is @inlinable so that it is specialized for the event type in the
// caller's module: the metatype lookup, the bytes check and the subtype read then
// compile to a few loads. Per dispatch it allocates the event cell and nothing else
// (a subtype of up to 15 UTF-8 bytes is passed from the stack; longer native strings
// are passed in place), takes no lock, and builds no C string for the type name (the
// record caches it). The engine call is `_qtbus_dispatch`, the same function C calls.
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
        Int(_send(event, flags: sticky ? 1 : 0, mode: .now))
    }

    /// Posts `event` to this bus's own serial queue, which then dispatches it as
    /// ``dispatch(_:sticky:)`` would; returns at once. Posts are delivered in the order
    /// they were made.
    ///
    /// - Returns: 0, or a negative engine status (see ``dispatch(_:sticky:)``).
    @inlinable
    @discardableResult
    public func dispatchOnBusQueue<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        Int(_send(event, flags: sticky ? 1 : 0, mode: .busQueue))
    }

    /// Posts `event` to the main queue (`DispatchQueue.main`, which C programs drain
    /// with `qtbus_main_drain`), where it is dispatched as ``dispatch(_:sticky:)``
    /// would; returns at once.
    ///
    /// - Returns: 0, or a negative engine status (see ``dispatch(_:sticky:)``).
    @inlinable
    @discardableResult
    public func dispatchOnMain<E: QTEvent>(_ event: E, sticky: Bool = false) -> Int {
        Int(_send(event, flags: sticky ? 1 : 0, mode: .main))
    }

    @inlinable
    func _send<E: QTEvent>(_ event: E, flags: UInt32, mode: _QTSendMode) -> Int32 {
        let record = _QTTypeTable.record(for: E.self)
        guard let cName = record.pointee.cName else { return -1 /* QTBUS_EINVAL */ }
        let names = record.pointee.names
        if names._withUnsafeGuaranteedRef({ $0.needsSweep }) { names._withUnsafeGuaranteedRef { $0.sweep() } }
        let object = _qtMakeCell(event)
        if record.pointee.isBytes, let bytesEvent = event as? any QTBytesEvent {
            return _qtSendBytes(raw, cName, event.eventSubType, bytesEvent.eventBytes, object, flags, mode)
        }
        guard let subType = event.eventSubType else {
            return _qtSend(raw, cName, nil, nil, 0, object, flags, mode)
        }
        return subType.withCString { _qtSend(raw, cName, $0, nil, 0, object, flags, mode) }
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
        _QTNameInfo.sweep(named: type)
        return Int(type.withCString { cName in
            _qtSendBytes(raw, cName, subType, bytes, nil, sticky ? 1 : 0, .now)
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
        _QTNameInfo.sweep(named: QTEventBus.jsonTypeName)
        let status = name.withCString { n in json.withCString { j in _qtbus_dispatch_json(raw, n, j) } }
        if let error = QTBusError(status: status) { throw error }
        return Int(status)
    }
}

/// Sends with `bytes` as the data, NUL-terminated (not counted).
@usableFromInline
func _qtSendBytes(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: String?, _ bytes: [UInt8],
                  _ object: UnsafeMutableRawPointer?, _ flags: UInt32, _ mode: _QTSendMode) -> Int32 {
    withUnsafeTemporaryAllocation(byteCount: bytes.count + 1, alignment: 16) { buffer in
        let base = buffer.baseAddress!
        bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(base), byteCount: $0.count) }
        base.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        guard let subType else { return _qtSend(bus, type, nil, base, bytes.count, object, flags, mode) }
        return subType.withCString { _qtSend(bus, type, $0, base, bytes.count, object, flags, mode) }
    }
}

/// The one call into the engine's dispatch entry points. On failure the engine took
/// nothing, so the event cell is freed here.
@usableFromInline
func _qtSend(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: UnsafePointer<CChar>?,
             _ data: UnsafeRawPointer?, _ size: Int, _ object: UnsafeMutableRawPointer?,
             _ flags: UInt32, _ mode: _QTSendMode) -> Int32 {
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
