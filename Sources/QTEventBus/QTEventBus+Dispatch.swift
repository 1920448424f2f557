// SPDX-License-Identifier: MIT
// Dispatching: typed events (the hot path), named events and JSON. The typed path
// itself, from the event to the engine, is Delivery/_Send.swift.
import CQtbusShims
import Glibc
import QTBusEngine

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

    // MARK: Named events

    /// Dispatches an event of the named type `type` (as C's `qtbus_dispatch` does), with
    /// `bytes` as its data, NUL-terminated for C readers (the NUL is not counted).
    /// C subscribers and ``on(named:)`` subscribers receive it; typed subscribers whose
    /// ``QTEvent/eventName`` is `type` receive it if their type is a ``QTBytesEvent``
    /// that decodes it. An invalid `type` or `subType` (``isValidName(_:)``) traps.
    ///
    /// - Returns: as ``dispatch(_:sticky:)``.
    @discardableResult
    public func dispatch(
        named type: String, subType: String? = nil, bytes: [UInt8] = [],
        sticky: Bool = false
    ) -> Int {
        let call = "dispatch(named:subType:bytes:sticky:)"
        _qtRequireName(type, .type, call)
        if let subType { _qtRequireName(subType, .subtype, call) }
        let status = type.withCString { cName in
            _QTOutgoing(
                bus: raw, typeName: cName, cell: nil, borrowed: false,
                flags: sticky ? UInt32(QTBUS_EVENT_STICKY) : 0, mode: .now
            )
            .withSubType(subType) { _qtSendBytes($0, bytes: bytes) } ?? QTBUS_EINVAL.rawValue
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
