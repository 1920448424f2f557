// SPDX-License-Identifier: MIT
// The bus: a Swift handle on one engine bus (qtbus_bus *).
import CQtbusShims
import Dispatch
import QTBusEngine

/// An event bus: QTEventBus's API over the qtbus engine.
///
/// ```swift
/// QTEventBus.shared.on(LoginEvent.self)
///     .ofSubType("alice")
///     .atQueue(.main)
///     .freeWith(self)
///     .next { event in print("welcome", event.userId) }
/// QTEventBus.shared.dispatch(LoginEvent(userId: "alice"))
/// ```
///
/// ``shared`` is the engine's process-wide bus, the one C code reaches with
/// `qtbus_shared()`: Swift and C in one process see each other's named and JSON events on
/// it. ``init()`` makes an isolated bus (tests, plugins, scopes), destroyed with the
/// Swift object: its subscriptions are then disposed (their closures released under
/// lifetime rule 1) and dispatches still running on other threads finish safely.
/// Subscriptions do not keep their bus alive (but a handler that captures its bus does,
/// until that subscription ends).
///
/// Every method is thread-safe and may be called from inside a handler: a dispatch from
/// a handler is delivered at once, depth-first; a subscription made during a dispatch
/// does not receive that dispatch; a handler may dispose its own token.
///
/// Order of delivery: by ``QTEventSubscriberMaker/priority(_:)``, highest first; at equal
/// priority, subscriptions naming the event's subtype before whole-type ones, each group
/// in subscription order.
public final class QTEventBus: @unchecked Sendable {
    // @unchecked: `raw` is an immutable pointer to an engine bus, whose every entry point
    // is thread-safe; `owned` is immutable.
    @usableFromInline let raw: OpaquePointer
    private let owned: Bool

    /// The process-wide bus: C's `qtbus_shared()`. Never destroyed.
    public static let shared = QTEventBus(raw: _qtbus_shared(), owned: false)

    /// A new isolated bus, destroyed when this object is deallocated.
    public init() {
        guard let bus = _qtbus_bus_create() else { _qtMisuse("QTEventBus.init()", "out of memory") }
        raw = bus
        owned = true
    }

    private init(raw: OpaquePointer, owned: Bool) {
        self.raw = raw
        self.owned = owned
    }

    deinit {
        if owned { _ = _qtbus_bus_destroy(raw) }
    }

    /// The engine bus (`qtbus_bus *`), for C code in the same process. Valid as long as
    /// this object lives (the shared bus: always).
    public var cBus: OpaquePointer { raw }

    // MARK: Subscribing

    /// Starts a subscription to the typed event `E`; finish it with
    /// ``QTEventSubscriberMaker/next(_:)-33cel``.
    ///
    /// If `E` is a ``QTSourcedEvent``, its source is claimed for each subscription.
    @inlinable
    public func on<E: QTEvent>(_ type: E.Type) -> QTEventSubscriberMaker<E> {
        // Inlinable so the delivery closure is specialized for E in the caller's module.
        QTEventSubscriberMaker(
            bus: self, isDirect: true,
            installRequest: { bus, options, handler in
                bus._subscribeTypedRequest(E.self, options: options, handler: handler)
            }
        ) { bus, options, handler in
            bus._subscribeTyped(
                E.self, options: options, fast: _qtTypedFastDeliver(E.self), hop: _qtTypedHopDeliver(E.self),
                handler: handler)
        }
    }

    /// Starts a subscription to the named type `type` (e.g. `"LoginEvent"`), as C code
    /// subscribes to it: every event of that name, whoever dispatched it, delivered as
    /// a ``QTNamedEvent`` (type, subtype and a copy of the bytes).
    ///
    /// JSON events are the type ``jsonTypeName`` with the JSON name as subtype:
    /// `bus.on(named: QTEventBus.jsonTypeName).ofSubType("profile")`.
    ///
    /// An invalid `type` (``isValidName(_:)``) is a programmer error: this call traps.
    public func on(named type: String) -> QTEventSubscriberMaker<QTNamedEvent> {
        _qtRequireName(type, .type, "on(named:)")
        return QTEventSubscriberMaker(
            bus: self,
            installRequest: { bus, options, handler in
                bus._subscribeNamedRequest(type, options: options, handler: handler)
            }
        ) { bus, options, handler in
            bus._subscribeNamed(type, options: options, handler: handler)
        }
    }

    /// Starts a subscription to every named type `pattern` matches, NATS's wildcards over
    /// dot-separated tokens: `"Order.*"` (one token), `"Order.>"` (one or more), `">"`
    /// (every event of the bus). Events are delivered as ``QTNamedEvent``, whoever
    /// dispatched them (typed Swift events as their ``QTEvent/eventName``). At equal
    /// priority, pattern subscriptions come after a type's own; C's `QTBUS_SUB_PATTERN`
    /// (include/qtbus.h) has the rules.
    ///
    /// An invalid pattern (an empty token, a `>` before the last token) or name is a
    /// programmer error: this call traps, naming the pattern and why.
    public func on(matching pattern: String) -> QTEventSubscriberMaker<QTNamedEvent> {
        _qtRequirePattern(pattern, "on(matching:)")
        var options = _QTSubscribeOptions()
        options.pattern = true
        return QTEventSubscriberMaker(
            bus: self, options: options,
            installRequest: { bus, options, handler in
                bus._subscribeNamedRequest(pattern, options: options, handler: handler)
            }
        ) { bus, options, handler in
            bus._subscribeNamed(pattern, options: options, handler: handler)
        }
    }

    /// The events of type `E` (of subtype `subType`, if given) as an `AsyncStream`,
    /// delivered on the dispatching thread into the stream's buffer. The subscription
    /// ends when the consumer stops (the loop ends, its task is cancelled or the stream
    /// is dropped). For more options, use ``QTEventSubscriberMaker/events(bufferingPolicy:)``.
    ///
    /// - Parameters:
    ///   - type: the event type.
    ///   - subType: only events of this subtype; nil: all of the type. An invalid
    ///     subtype (``isValidName(_:)``) traps.
    ///   - bufferingPolicy: AsyncStream's. The default, `.unbounded`, keeps every event
    ///     until it is read, so a consumer slower than the dispatches makes the buffer
    ///     grow; `.bufferingNewest(n)` keeps the latest `n` (a UI showing a state),
    ///     `.bufferingOldest(n)` the first `n`. Dispatches never wait for the consumer.
    public func events<E: QTEvent>(
        of type: E.Type, subType: String? = nil,
        bufferingPolicy: AsyncStream<E>.Continuation.BufferingPolicy = .unbounded
    )
        -> AsyncStream<E>
    {
        var maker = on(type)
        maker.options.call = .eventsOf
        if let subType {
            _qtRequireName(subType, .subtype, "\(_QTSubscribeCall.eventsOf) of \(String(reflecting: E.self))")
            maker = maker.ofSubType(subType)
        }
        return maker.events(bufferingPolicy: bufferingPolicy)
    }

    // MARK: Counting and sticky events

    /// How many live subscriptions an event of `E` would reach: every one of the type
    /// when `subType` is nil; with a subtype, the whole-type ones plus that subtype's.
    /// Subscriptions C code made to the same name count too. An invalid subtype or
    /// ``QTEvent/eventName`` (``isValidName(_:)``) traps.
    public func subscriberCount<E: QTEvent>(of type: E.Type, subType: String? = nil) -> Int {
        let call = "subscriberCount(of:subType:)"
        return _count(_qtRequireTypeName(E.self, call), subType, "\(call) of \(String(reflecting: E.self))")
    }

    /// ``subscriberCount(of:subType:)`` for a named type.
    public func subscriberCount(named type: String, subType: String? = nil) -> Int {
        let call = "subscriberCount(named:subType:)"
        _qtRequireName(type, .type, call)
        return type.withCString { _count($0, subType, call) }
    }

    private func _count(_ cName: UnsafePointer<CChar>, _ subType: String?, _ call: @autoclosure () -> String) -> Int {
        if let subType { _qtRequireName(subType, .subtype, call()) }
        let n =
            subType.map { s in s.withCString { _qtbus_subscriber_count(raw, cName, $0) } }
            ?? _qtbus_subscriber_count(raw, cName, nil)
        if n < 0 { _qtRefused(call(), n) }
        return Int(n)
    }

    /// Drops the kept sticky events of `E` with subtype `subType`, or of every subtype
    /// (the one kept without a subtype included) when it is nil. An invalid subtype or
    /// ``QTEvent/eventName`` (``isValidName(_:)``) traps.
    ///
    /// - Returns: how many were dropped (0 when none was kept): a count, never a refusal.
    @discardableResult
    public func removeSticky<E: QTEvent>(_ type: E.Type, subType: String? = nil) -> Int {
        let call = "removeSticky(_:subType:)"
        return _clear(_qtRequireTypeName(E.self, call), subType, "\(call) of \(String(reflecting: E.self))")
    }

    /// ``removeSticky(_:subType:)`` for a named type.
    @discardableResult
    public func removeSticky(named type: String, subType: String? = nil) -> Int {
        let call = "removeSticky(named:subType:)"
        _qtRequireName(type, .type, call)
        return type.withCString { _clear($0, subType, call) }
    }

    private func _clear(_ cName: UnsafePointer<CChar>, _ subType: String?, _ call: @autoclosure () -> String) -> Int {
        if let subType { _qtRequireName(subType, .subtype, call()) }
        let n =
            subType.map { s in s.withCString { _qtbus_sticky_clear(raw, cName, $0) } }
            ?? _qtbus_sticky_clear(raw, cName, nil)
        if n < 0 { _qtRefused(call(), n) }
        return Int(n)
    }

    /// The type name of JSON events (`QTBUS_JSON_TYPE`): their subtype is the JSON
    /// name, their bytes the JSON text.
    public static let jsonTypeName = QTBUS_JSON_TYPE

    /// The type name of events that reached no subscription
    /// (`QTBUS_NO_SUBSCRIBER_TYPE`): their subtype is the original type name, their
    /// bytes the original bytes.
    public static let noSubscriberTypeName = QTBUS_NO_SUBSCRIBER_TYPE
}
