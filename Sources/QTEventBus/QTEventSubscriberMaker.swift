// SPDX-License-Identifier: MIT
// The subscription builder: QTEventBus's `on(...).ofSubType(...).atQueue(...).next(...)`.
import CQtbusShims
import Dispatch

/// Builds one subscription: start with ``QTEventBus/on(_:)`` or
/// ``QTEventBus/on(named:)``, chain options, finish with ``next(_:)-33cel``.
///
/// ```swift
/// bus.on(LoginEvent.self)
///     .ofSubType("alice").ofSubType("bob")   // either subtype
///     .atQueue(.main)                        // delivered on the main queue
///     .freeWith(self)                        // ends when self is deallocated
///     .priority(10)                          // before lower priorities
///     .next { event in print(event.userId) }
/// ```
///
/// A maker is a value: each option returns a modified copy, and nothing is subscribed
/// until ``next(_:)-33cel`` (or ``events(bufferingPolicy:)``).
public struct QTEventSubscriberMaker<Event> {
    @usableFromInline let bus: QTEventBus
    @usableFromInline var options = _QTSubscribeOptions()
    /// Makes the subscription: typed, named, or mapped from another maker's.
    @usableFromInline
    let install: (QTEventBus, _QTSubscribeOptions, @escaping @Sendable (Event) -> Void) -> QTEventToken
    /// Made by `on(E.self)` itself (not mapped): `next` may subscribe `Event` directly.
    @usableFromInline let isDirect: Bool
    /// Makes a subscription whose handler also gets the delivery's request context
    /// (`nextRequest`); nil for mapped makers, whose deliveries no longer know it.
    @usableFromInline
    let installRequest:
        (
            (QTEventBus, _QTSubscribeOptions, @escaping @Sendable (Event, QTRequestContext) -> Void)
                -> QTEventToken
        )?

    @usableFromInline
    init(
        bus: QTEventBus, options: _QTSubscribeOptions = _QTSubscribeOptions(), isDirect: Bool = false,
        installRequest: (
            (QTEventBus, _QTSubscribeOptions, @escaping @Sendable (Event, QTRequestContext) -> Void)
                -> QTEventToken
        )? = nil,
        install: @escaping (QTEventBus, _QTSubscribeOptions, @escaping @Sendable (Event) -> Void) -> QTEventToken
    ) {
        self.bus = bus
        self.options = options
        self.isDirect = isDirect
        self.installRequest = installRequest
        self.install = install
    }

    /// Receives only events of this subtype. Repeat it to receive any of several
    /// subtypes (each event once, even if a name is repeated). Without it the
    /// subscription receives every event of the type, with or without a subtype.
    ///
    /// A subtype that is not a valid name (``QTEventBus/isValidName(_:)``: empty, longer
    /// than 255 UTF-8 bytes, or holding a NUL byte) is a programmer error: this call
    /// traps, naming the subtype and why.
    public func ofSubType(_ subType: String) -> Self {
        _qtRequireName(subType, .subtype, "ofSubType(_:)")
        var copy = self
        copy.options.subTypes.append(subType)
        return copy
    }

    /// Runs the handler on `queue` (`.main`: the main queue, which C programs drain with
    /// `qtbus_main_drain`) instead of on the dispatching thread.
    ///
    /// The event is handed over with `queue.async`; a delivery still queued when the
    /// token is disposed (or the ``freeWith(_:)`` object is gone) is dropped.
    /// Deliveries reach a serial queue in dispatch order.
    public func atQueue(_ queue: DispatchQueue) -> Self {
        var copy = self
        copy.options.queue = queue
        return copy
    }

    /// Bounds the deliveries waiting for the ``atQueue(_:)`` queue (or the main queue,
    /// ``nextOnMain(_:)``) at `capacity`, and says what happens to one more: C's
    /// `qtbus_queue_set_limit` rules, for this subscription alone (``QTOverflow``).
    ///
    /// A delivery waits from its dispatch until its handler starts. A dropped one never
    /// reaches the handler and completes its part of a request; the dispatch still
    /// counts the subscription as reached (the bus handed the event to it: the buffer
    /// is the subscription's own, unlike a C queue's). Each drop is a DROP record on
    /// the bus's trace hook
    /// (``QTTraceKinds/drop``, `function` naming the rule). FIFO among the deliveries
    /// kept; ``QTOverflow/latest`` keeps the replaced one's place. Without a queue the
    /// subscription has nothing to buffer: finishing the maker traps, as a capacity
    /// below 1 does here.
    public func buffer(_ capacity: Int, whenFull: QTOverflow) -> Self {
        if capacity < 1 { _qtMisuse("buffer(_:whenFull:)", "the capacity \(capacity) is below 1") }
        var copy = self
        copy.options.buffer = (capacity, whenFull)
        return copy
    }

    /// Ties the subscription to `object`'s lifetime, weakly: once `object` is
    /// deallocated the handler is never called again, ``QTEventBus/subscriberCount(of:subType:)``
    /// does not count the subscription, no dispatch reports it as reached, and it is
    /// disposed (its closure released) no later than the end of the next dispatch of the
    /// type (for ``QTEventBus/on(matching:)``: of a type the pattern matches), from Swift
    /// or C. `nil` ties it to nothing: the subscription lives until disposed.
    ///
    /// Linux has no associated objects, so the end is noticed by that next dispatch (or
    /// count), not in `object`'s deinit: each dispatch of the type checks each freeWith
    /// subscription's object (a weak load). Use ``disposed(by:)`` with a ``QTDisposeBag``
    /// the object owns to end it exactly when the object goes.
    public func freeWith(_ object: AnyObject?) -> Self {
        var copy = self
        copy.options.owner = object
        return copy
    }

    /// Puts the token in `bag`: the subscription ends when the bag is disposed or
    /// deallocated.
    public func disposed(by bag: QTDisposeBag) -> Self {
        var copy = self
        copy.options.bag = bag
        return copy
    }

    /// Delivery order: higher priorities first (default 0); equal priorities in the
    /// order subscribed (subtype subscriptions before whole-type ones). Clamped to the
    /// range of `Int32`.
    public func priority(_ priority: Int) -> Self {
        var copy = self
        copy.options.priority = Int32(clamping: priority)
        return copy
    }

    /// Receives at most one event, even when several threads dispatch at once, then
    /// ends (the token becomes inactive as the delivery starts).
    public func once() -> Self {
        var copy = self
        copy.options.once = true
        return copy
    }

    /// On subscribing, first receives the kept sticky events that match (see
    /// ``QTEventBus/dispatch(_:sticky:)``), oldest first, then live events: no gap, no
    /// duplicate. Without ``atQueue(_:)`` the replay runs before ``next(_:)-33cel`` returns.
    public func replay() -> Self {
        var copy = self
        copy.options.replay = true
        return copy
    }

    /// A maker whose handler receives `transform(event)`. The transform runs where the
    /// handler runs (after an ``atQueue(_:)`` hop), so `T` need not be `Sendable`;
    /// this is how QTEventBusFoundation delivers `Notification`.
    public func map<T>(_ transform: @escaping @Sendable (Event) -> T) -> QTEventSubscriberMaker<T> {
        let base = install
        return QTEventSubscriberMaker<T>(bus: bus, options: options) { bus, options, handler in
            base(bus, options) { event in handler(transform(event)) }
        }
    }

    /// Subscribes `handler` and returns the subscription's token.
    ///
    /// The handler runs on the dispatching thread (or on the ``atQueue(_:)`` queue),
    /// possibly on several threads at once when several threads dispatch; it may call
    /// the bus (dispatch, subscribe, dispose its own token). The closure is released
    /// once the subscription has ended and no call of it is running. Keep the token, or
    /// use ``disposed(by:)`` / ``freeWith(_:)``: a token that is simply dropped does not
    /// end the subscription.
    ///
    /// A subscription the bus refuses is a programmer error and traps, as an index out
    /// of range does, with a message naming the call, the name and the reason: a typed
    /// event whose ``QTEvent/eventName`` is not a valid name (``QTEventBus/isValidName(_:)``;
    /// an invalid subtype or named type traps earlier, in ``ofSubType(_:)`` or
    /// ``QTEventBus/on(named:)``), more subtypes than the engine takes, or no memory
    /// left. Every way to finish a maker (`next`, `nextOnMain`, `nextRequest`, `reply`,
    /// `events`) follows this rule. The token is never a refusal, so it may be dropped
    /// (see above for what keeps the subscription).
    @inlinable
    @discardableResult
    public func next(_ handler: @escaping @Sendable (Event) -> Void) -> QTEventToken {
        install(bus, options, handler)
    }
}

extension QTEventSubscriberMaker where Event: QTEvent {
    /// Subscribes `handler` and returns the subscription's token (see the unconstrained
    /// ``next(_:)-33cel``).
    ///
    /// This overload is what typed subscriptions use: inlined into the caller, it builds
    /// the delivery path specialized for `Event`, and the handler receives the value
    /// straight from the event with no reabstraction.
    @inlinable
    @discardableResult
    public func next(_ handler: @escaping @Sendable (Event) -> Void) -> QTEventToken {
        guard isDirect else { return install(bus, options, handler) }
        return bus._subscribeTyped(
            Event.self, options: options, fast: _qtTypedFastDeliver(Event.self),
            hop: _qtTypedHopDeliver(Event.self), handler: handler)
    }
}

extension QTEventSubscriberMaker where Event: Sendable {
    /// Subscribes a main-actor handler: as `atQueue(.main).next(handler)`, with the
    /// handler isolated to the main actor (it runs when the main queue is drained:
    /// `DispatchQueue.main` in a Swift program, `qtbus_main_drain` in a C one).
    @discardableResult
    public func nextOnMain(_ handler: @escaping @MainActor @Sendable (Event) -> Void) -> QTEventToken {
        var maker = atQueue(.main)
        maker.options.call = .nextOnMain
        return maker.next { event in
            MainActor.assumeIsolated { handler(event) }
        }
    }

    /// The subscription as an `AsyncStream`, for `for await`.
    ///
    /// Events are yielded from the handler (on the dispatching thread, or the
    /// ``atQueue(_:)`` queue) into the stream's buffer. The subscription ends when the
    /// consumer stops: its loop ends, its task is cancelled, or the stream is dropped
    /// (`onTermination` disposes the token). With ``once()`` the stream finishes after
    /// its one event.
    public func events(bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded)
        -> AsyncStream<Event>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: bufferingPolicy)
        let once = options.once
        var maker = self
        // `events(of:subType:bufferingPolicy:)` named itself already.
        if options.call == .next { maker.options.call = .events }
        let token = maker.next { event in
            continuation.yield(event)
            if once { continuation.finish() }
        }
        continuation.onTermination = { _ in token.dispose() }
        return stream
    }
}
