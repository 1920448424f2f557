// SPDX-License-Identifier: MIT
// The userdata behind every Swift subscription, and the two C functions the engine
// calls with it.
//
// Each subscription is one engine subscription whose handler is `_qtDeliver` and whose
// userdata is a retained `_QTSubscription` (Unmanaged); `_qtSubscriptionRelease`
// releases it, which the engine guarantees happens exactly once, after the last call
// (lifetime rule 1). The engine subscription itself is always synchronous: a Swift
// DispatchQueue is not an engine queue, so an `atQueue` subscription hops from the
// dispatching thread with `queue.async`, and the hop re-checks the token and the
// freeWith object when it runs, so a dispose that returned before the hop runs drops it
// (lifetime rule 2). DispatchQueue.main is libdispatch's main queue, the same one C's
// qtbus_queue_main() names and qtbus_main_drain() runs.
//
// Subscription state: made (subscribe in progress) -> live (engine token known) ->
// cancelled (token disposed, freeWith object gone, or released) -> released (release
// hook ran, the handler dropped; the box, which is the token, goes when the caller's
// references and the last queued hop holding it are gone).
//
// The delivery path. `_qtDeliver` borrows the box (no reference counting: the engine
// keeps the userdata alive during the call) and calls its `deliver` closure. For a plain
// typed subscription (no queue, no freeWith) that closure is `_qtTypedFastDeliver`,
// which is @inlinable and built by the @inlinable `on`/`next` in the subscriber's
// module, so it is specialized for the event type: it captures nothing (no context to
// load), checks the cell key, reads the handler from the `_QTTypedSubscription` box (the
// line `_qtDeliver` just loaded) and calls it with the value read in place: no
// reference counting, no generic value-witness calls, no copy, nothing written to
// shared memory (so several threads can dispatch the same type and scale). Everything
// else (freeWith, hops, events that arrived as bytes) goes through the box's
// `slowDeliver` method (unspecialized code).
//
// Memory: the box is the token (a `QTEventToken` subclass), and the only Swift object
// of a plain subscription (besides the handler closure's own context, if it captures
// anything): token state, deliver and handler, 56 bytes, a 64-byte malloc chunk, beside
// the engine's 80-byte record. The slow path is a method rather than a closure with a
// context of its own; options (queue, freeWith, source, ONCE with a queue) make a
// subclass with one `_QTSubscriptionExtras`. The token does not keep the handler alive
// past the subscription: the release hook drops the handler's closure context
// (`dropHandler`), so a token kept after its subscription ended holds no user closure.
import CQtbusShims
import Dispatch
import QTBusEngine

/// Options collected by a maker.
@usableFromInline
struct _QTSubscribeOptions {
    var subTypes: [String] = []
    var queue: DispatchQueue? = nil
    /// `buffer(_:whenFull:)`: the capacity and the rule.
    var buffer: (capacity: Int, whenFull: QTOverflow)? = nil
    var owner: AnyObject? = nil
    var bag: QTDisposeBag? = nil
    var priority: Int32 = 0
    var once = false
    var replay = false
    /// `on(matching:)`: the type is a pattern (QTBUS_SUB_PATTERN).
    var pattern = false
    /// The public call that makes the subscription, for the message of a refusal.
    @usableFromInline var call = _QTSubscribeCall.next

    @usableFromInline
    init() {}
}

/// The public calls that finish a maker.
@usableFromInline
enum _QTSubscribeCall: CustomStringConvertible {
    case next, nextOnMain, nextRequest, reply, events, eventsOf

    @usableFromInline
    var description: String {
        switch self {
        case .next: "next(_:)"
        case .nextOnMain: "nextOnMain(_:)"
        case .nextRequest: "nextRequest(_:)"
        case .reply: "reply(_:)"
        case .events: "events(bufferingPolicy:)"
        case .eventsOf: "events(of:subType:bufferingPolicy:)"
        }
    }
}

/// What the engine calls for one subscription: `(box, event)`.
@usableFromInline
typealias _QTDeliverFunction = @Sendable (_QTSubscription, OpaquePointer) -> Void

/// The engine's userdata for one Swift subscription, and the whole Swift side of it:
/// one object per subscription, which is also its token. This base holds what
/// `_qtDeliver` reads; `_QTHandlerSubscription` puts the handler right after it, so that
/// a plain delivery reads one line.
@usableFromInline
class _QTSubscription: QTEventToken, @unchecked Sendable {
    // @unchecked: immutable after init (the token's state is atomic).
    /// Called by `_qtDeliver` for every delivery. (Not optional: an optional closure is
    /// stored at maximal abstraction and costs two reabstraction thunks per call.)
    @usableFromInline let deliver: _QTDeliverFunction

    init(deliver: @escaping _QTDeliverFunction) {
        self.deliver = deliver
        super.init()
    }

    /// Everything the fast path does not handle (freeWith, hops, events that arrived
    /// as bytes); a method rather than a stored closure, so it costs no closure context.
    func slowDeliver(_ event: OpaquePointer) { fatalError("abstract") }

    /// The release hook: the engine will never call this subscription again.
    func released() { fatalError("abstract") }

    /// The freeWith object, if one was given and is still there.
    var owner: AnyObject? { nil }
}

/// The `deliver` of every subscription but plain typed ones (captures nothing).
let _qtSlowDeliverFunction: _QTDeliverFunction = { subscription, event in subscription.slowDeliver(event) }

/// What only subscriptions with options need: a queue, a freeWith object, a source
/// claim. Apart (in a subclass's field) so that a plain subscription does not carry it.
@usableFromInline
final class _QTSubscriptionExtras: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init except `owner`, a weak
    // reference also written only in init (the runtime makes weak loads thread-safe).
    @usableFromInline let queue: DispatchQueue?
    /// The engine bus, whose queued work a hop is (qtbus_bus_wait_idle waits for it).
    @usableFromInline let bus: OpaquePointer
    /// `queue` is the main queue.
    @usableFromInline let isMain: Bool
    /// `buffer(_:whenFull:)`'s bound on the hops waiting.
    @usableFromInline let buffer: _QTHopBuffer?
    weak var owner: AnyObject?
    let hasOwner: Bool
    /// ONCE: released as it fires, which must not drop its queued hop.
    let once: Bool
    /// Ends the claim a `QTSourcedEvent` made for this subscription.
    let sourceEnd: (@Sendable () -> Void)?

    /// Nil when there is nothing to keep (without a queue, ONCE needs nothing here).
    static func make(
        options: _QTSubscribeOptions, bus: OpaquePointer,
        sourceEnd: (@Sendable () -> Void)?
    ) -> _QTSubscriptionExtras? {
        if options.queue == nil && options.owner == nil && sourceEnd == nil { return nil }
        return _QTSubscriptionExtras(options: options, bus: bus, sourceEnd: sourceEnd)
    }

    private init(options: _QTSubscribeOptions, bus: OpaquePointer, sourceEnd: (@Sendable () -> Void)?) {
        queue = options.queue
        self.bus = bus
        isMain = options.queue?.label == DispatchQueue.main.label
        buffer = options.queue.flatMap { queue in
            options.buffer.map { _QTHopBuffer(capacity: $0.capacity, rule: $0.whenFull, queue: queue) }
        }
        owner = options.owner
        hasOwner = options.owner != nil
        once = options.once
        self.sourceEnd = sourceEnd
    }
}

/// A subscription whose handler takes `V`: the typed event, or QTNamedEvent.
@usableFromInline
class _QTHandlerSubscription<V: Sendable>: _QTSubscription, @unchecked Sendable {
    // @unchecked: immutable after init but for the context of `handler`, which only
    // the release hook drops, after the engine's last call (see `dropHandler`).
    /// First: the fast path reads it right after `deliver`. A `let`, although
    /// `dropHandler` writes it: calling a closure read from a `var` retains and releases
    /// its context around the call (an atomic write to memory every dispatching thread
    /// shares, on each delivery).
    @usableFromInline let handler: _QTHandler<V>

    init(deliver: @escaping _QTDeliverFunction, handler: @escaping @Sendable (V) -> Void) {
        self.handler = _QTHandler(call: handler)
        super.init(deliver: deliver)
    }

    /// The options, in the subclasses that have any (a plain subscription has none),
    /// for the release. Deliveries pass theirs along instead: the value this returns
    /// is retained and released at every call.
    var extras: _QTSubscriptionExtras? { nil }

    /// Whether a freeWith object was given and is gone; if so, ends the subscription.
    /// A hop asks when it runs; a delivery needs not: the engine asked just before it.
    @inline(__always)
    final func expireIfOwnerGone(_ extras: _QTSubscriptionExtras?) -> Bool {
        guard let extras, extras.hasOwner && extras.owner == nil else { return false }
        dispose()
        return true
    }

    /// Whether a hop that has reached its queue calls the handler: the subscription is
    /// live (lifetime rule 2) and its freeWith object, if any, is still there.
    @usableFromInline
    final func hopMayRun(_ extras: _QTSubscriptionExtras?) -> Bool {
        !(isCancelled || expireIfOwnerGone(extras))
    }

    /// Calls the handler with `value` now, or after a hop to the subscription's queue
    /// (in `extras`).
    final func run(_ value: V, _ event: OpaquePointer, _ extras: _QTSubscriptionExtras?) {
        guard let queue = extras?.queue else {
            handler(value)
            return
        }
        hop(value, event, to: queue, extras)
    }

    /// Calls the handler with `value` on `queue` if the subscription is still live then
    /// (the hop keeps this object alive). A request (`event`) stays open until the hop
    /// has run, so its completion comes after this handler, as after an engine-queued
    /// one. Inlinable: `_qtTypedHopDeliver` gets it specialized for the event type, so
    /// the closure's context has the value's layout (unspecialized, the value is copied
    /// in and destroyed through its value witnesses, and the context's layout computed
    /// from its metadata, on each hop).
    @inlinable @inline(__always)
    final func hop(_ value: V, _ event: OpaquePointer, to queue: DispatchQueue, _ extras: _QTSubscriptionExtras?) {
        // The held request travels as an integer, not as an Optional: an Optional in the
        // closure's context made its destruction fetch `Optional<...>` metadata through
        // the runtime on every hop (the Swift benchmark's queued rows).
        let heldBits = UInt(bitPattern: _qtEngineHoldRequest(event))  // 0: not a request
        // The hop runs outside the engine's handler call: it takes the event's headers
        // along (0: none), to be `currentHeaders` and the inherited context meanwhile.
        let headerBits = UInt(bitPattern: _qtEngineHoldHeaders(event))
        // The hop carries the handler: a ONCE subscription is released (its handler
        // dropped) as it fires, before its hop runs.
        let handler = self.handler
        let extras = extras.unsafelyUnwrapped  // a subscription with a queue has them
        if let buffer = extras.buffer { return bufferedHop(value, event, heldBits, headerBits, buffer, extras) }
        let isMain = extras.isMain
        _qtEngineQueuedWorkBegin(extras.bus, main: isMain)
        queue.async { [self] in
            if hopMayRun(extras) { _qtRunHop(headerBits) { handler(value) } }
            if heldBits != 0 { _qtEngineReleaseHeldRequest(OpaquePointer(bitPattern: heldBits)!) }
            if headerBits != 0 { _qtEngineReleaseHeldHeaders(OpaquePointer(bitPattern: headerBits)!) }
            _qtEngineQueuedWorkEnd(extras.bus)
        }
        if isMain { _qtEngineMainWorkPosted(extras.bus) }
    }

    /// `hop` through the subscription's buffer, which runs or drops it.
    @usableFromInline @inline(never)
    final func bufferedHop(
        _ value: V, _ event: OpaquePointer, _ heldBits: UInt, _ headerBits: UInt, _ buffer: _QTHopBuffer,
        _ extras: _QTSubscriptionExtras
    ) {
        let handler = self.handler
        let (isMain, token) = (extras.isMain, id)
        let type = String(cString: _qtbus_event_type(event)!)
        let subType = _qtbus_event_subtype(event).map { String(cString: $0) }
        // Run or dropped, the hop's end is the same: its request part done, its work over.
        @Sendable func end() {
            if heldBits != 0 { _qtEngineReleaseHeldRequest(OpaquePointer(bitPattern: heldBits)!) }
            if headerBits != 0 { _qtEngineReleaseHeldHeaders(OpaquePointer(bitPattern: headerBits)!) }
            _qtEngineQueuedWorkEnd(extras.bus)
        }
        _qtEngineQueuedWorkBegin(extras.bus, main: isMain)
        buffer.offer(
            _QTHopBuffer.Waiting(
                subType: subType,
                run: { [self] in
                    if hopMayRun(extras) { _qtRunHop(headerBits) { handler(value) } }
                    end()
                },
                drop: { rule in
                    _qtEngineReportDrop(extras.bus, token: token, type: type, subtype: subType, rule: rule)
                    end()
                }))
        if isMain { _qtEngineMainWorkPosted(extras.bus) }
    }

    override func released() {
        let extras = self.extras
        // A ONCE subscription is released as it fires: its hop must still run.
        if !(extras?.once ?? false) { markCancelled() }
        extras?.sourceEnd?()
        dropHandler()
    }

    /// Lets go of the handler closure's context (the release hook: the engine will make
    /// no further call), so that a token kept after its subscription ended holds no
    /// user closure. Swift has no value of `(V) -> Void` to put in its place without
    /// allocating a context (a closure in this generic class captures `V`), so the field
    /// keeps its function with a nil context, and is never called again: every call
    /// reads it during a delivery, which the release follows, and a hop took its own
    /// copy. Layout 2 of `_Invariants.swift`; releasing nil, in deinit, does nothing.
    private final func dropHandler() {
        // A compiler that laid the object out otherwise: keep the closure until the
        // token goes rather than write into a field this code does not know (the
        // delivery layout test fails then).
        guard let field = handlerField else { return }
        let word = MemoryLayout<UInt>.size
        guard let context = field.load(fromByteOffset: word, as: UnsafeRawPointer?.self) else { return }
        field.storeBytes(of: nil, toByteOffset: word, as: UnsafeRawPointer?.self)
        Unmanaged<AnyObject>.fromOpaque(context).release()
    }

    /// The address of `handler` in this object: `handlerOffset` from its start, if the
    /// two words there are the handler's (its function, then its context); nil if not.
    final var handlerField: UnsafeMutableRawPointer? {
        let field = Unmanaged.passUnretained(self).toOpaque() + Self.handlerOffset
        // A bit cast, not withUnsafeBytes(of:), which would look up `_QTHandler<V>`'s
        // metadata on every release.
        let bits = unsafeBitCast(handler, to: (UInt, UInt).self)
        let word = MemoryLayout<UInt>.size
        let found = bits.0 == field.load(as: UInt.self) && bits.1 == field.load(fromByteOffset: word, as: UInt.self)
        return found ? field : nil
    }

    /// Where `handler` is in the object: after the object header (two words), the
    /// token's state and `deliver`, as Swift lays out a class's stored properties (those
    /// of its superclasses first, each at its alignment, like a struct's). Layout 2 of
    /// `_Invariants.swift`; `handlerField` checks it against the value it reads.
    static var handlerOffset: Int {
        MemoryLayout<(UInt, UInt, UInt64, _QTDeliverFunction)>.size
    }
}

/// A subscription's handler closure, in a struct so that `dropHandler` can compare
/// its bits (a bare function passed to a generic parameter is reabstracted: a new
/// closure context).
@usableFromInline
struct _QTHandler<V>: Sendable {
    @usableFromInline let call: @Sendable (V) -> Void

    init(call: @escaping @Sendable (V) -> Void) { self.call = call }

    @inlinable @inline(__always)
    func callAsFunction(_ value: V) { call(value) }
}

/// A subscription to the typed event `E`: the fast path reads `handler` from here.
/// Plain (no options): exactly this class; else `_QTTypedOptionsSubscription`.
@usableFromInline
class _QTTypedSubscription<E: QTEvent>: _QTHandlerSubscription<E>, @unchecked Sendable {
    // @unchecked: no stored properties of its own.

    /// A plain subscription's slow path: events that arrived as bytes, or from another
    /// Swift type with the same engine name.
    override func slowDeliver(_ event: OpaquePointer) {
        deliver(event, nil)
    }

    /// The general delivery: hops, decoding (and freeWith, which the engine checked).
    final func deliver(_ event: OpaquePointer, _ extras: _QTSubscriptionExtras?) {
        if let value = _qtCellValue(E.self, in: event) {
            run(value.pointee, event, extras)
            return
        }
        deliverDecoded(event, extras)
    }

    /// No Swift value of type E: C dispatched it, or a Swift named dispatch did.  Out of
    /// line so that `slowDeliver` has no `E?` local: unspecialized code fetches the
    /// metadata of `Optional<E>` on entry to a function that has one, even on the path
    /// that never uses it (docs/perf-notes.md, "No `E?` in `slowDeliver`").
    @inline(never)
    private func deliverDecoded(_ event: OpaquePointer, _ extras: _QTSubscriptionExtras?) {
        guard let bytesType = E.self as? any QTBytesEvent.Type else { return }
        var size = 0
        let data = _qtbus_event_data(event, &size)
        let subType = _qtbus_event_subtype(event).map { String(cString: $0) }
        guard
            let value = bytesType.init(
                eventBytes: UnsafeRawBufferPointer(start: data, count: size),
                subType: subType) as? E
        else { return }
        run(value, event, extras)
    }
}

/// A typed subscription with options (queue, freeWith, source). With a queue, its
/// `deliver` is `_qtTypedHopDeliver`, specialized for E in the subscriber's module.
@usableFromInline
final class _QTTypedOptionsSubscription<E: QTEvent>: _QTTypedSubscription<E>, @unchecked Sendable {
    // @unchecked: immutable after init.
    @usableFromInline let storedExtras: _QTSubscriptionExtras

    init(
        deliver: @escaping _QTDeliverFunction, handler: @escaping @Sendable (E) -> Void,
        extras: _QTSubscriptionExtras
    ) {
        storedExtras = extras
        super.init(deliver: deliver, handler: handler)
    }

    override var extras: _QTSubscriptionExtras? { storedExtras }

    override var owner: AnyObject? { storedExtras.owner }

    override func slowDeliver(_ event: OpaquePointer) {
        deliver(event, storedExtras)
    }
}

/// A subscription to a named type: every delivery copies the event.
final class _QTNamedSubscription: _QTHandlerSubscription<QTNamedEvent>, @unchecked Sendable {
    // @unchecked: immutable after init.
    private let storedExtras: _QTSubscriptionExtras?

    init(handler: @escaping @Sendable (QTNamedEvent) -> Void, extras: _QTSubscriptionExtras?) {
        storedExtras = extras
        super.init(deliver: _qtSlowDeliverFunction, handler: handler)
    }

    override var extras: _QTSubscriptionExtras? { storedExtras }

    override var owner: AnyObject? { storedExtras?.owner }

    override func slowDeliver(_ event: OpaquePointer) {
        run(QTNamedEvent(copying: event), event, storedExtras)
    }
}

/// The fast delivery of a plain typed subscription (no queue, no freeWith): built
/// specialized for `E` in the subscriber's module, it captures nothing (no closure
/// context to load), checks the cell key and calls the handler with the value read in
/// place. Anything else goes to the slow path.
@inlinable
func _qtTypedFastDeliver<E: QTEvent>(_: E.Type) -> _QTDeliverFunction {
    { subscription, event in
        if let value = _qtCellValue(E.self, in: event) {
            // Borrowed: the engine keeps the cell until this call has returned.
            unsafeDowncast(subscription, to: _QTTypedSubscription<E>.self).handler(value.pointee)
        } else {
            _qtSlowDeliver(subscription, event)
        }
    }
}

/// The delivery of a typed subscription with a queue (`atQueue`), built like
/// `_qtTypedFastDeliver` by the subscriber's module: a Swift value of type E takes the
/// specialized hop (`_QTHandlerSubscription.hop`); anything else (bytes from C, a
/// value of another type with the same name) takes the slow path, which decodes first.
@inlinable
func _qtTypedHopDeliver<E: QTEvent>(_: E.Type) -> _QTDeliverFunction {
    { subscription, event in
        if let value = _qtCellValue(E.self, in: event) {
            let options = unsafeDowncast(subscription, to: _QTTypedOptionsSubscription<E>.self)
            let extras = options.storedExtras
            options.hop(value.pointee, event, to: extras.queue.unsafelyUnwrapped, extras)
        } else {
            _qtSlowDeliver(subscription, event)
        }
    }
}

/// The fast path's way out, out of line: the call in place kept registers live across
/// it, which made every fast delivery save and restore three more registers.
@usableFromInline @inline(never)
func _qtSlowDeliver(_ subscription: _QTSubscription, _ event: OpaquePointer) {
    subscription.slowDeliver(event)
}

/// The engine handler of every Swift subscription.
let _qtDeliver: qtbus_handler = { event, userdata in
    // Borrowed: the engine keeps the userdata until the release hook, which cannot run
    // before this call returns.
    Unmanaged<_QTSubscription>.fromOpaque(userdata.unsafelyUnwrapped)
        ._withUnsafeGuaranteedRef { $0.deliver($0, event.unsafelyUnwrapped) }
}

/// The engine release hook of every Swift subscription.
let _qtSubscriptionRelease: qtbus_release = { userdata in
    Unmanaged<_QTSubscription>.fromOpaque(userdata.unsafelyUnwrapped).takeRetainedValue().released()
}

extension QTEventBus {
    /// Subscribes to the typed event `E`. `fast` is the plain-subscription path and
    /// `hop` the path with a queue, built by the (specialized) caller with
    /// `_qtTypedFastDeliver` and `_qtTypedHopDeliver`.
    @usableFromInline
    func _subscribeTyped<E: QTEvent>(
        _ type: E.Type, options: _QTSubscribeOptions,
        fast: @escaping _QTDeliverFunction, hop: @escaping _QTDeliverFunction,
        handler: @escaping @Sendable (E) -> Void
    ) -> QTEventToken {
        _ = _qtRequireTypeName(E.self, "\(options.call)")
        let record = _QTTypeRecord.of(E.self)
        return _subscribe(
            name: record.pointee.names.takeUnretainedValue(), options: options,
            source: _qtSourceStart(E.self)
        ) { sourceEnd in
            // Plain (no queue, no freeWith): the specialized fast path; with a queue, the
            // specialized hop; else the slow path.
            guard let extras = _QTSubscriptionExtras.make(options: options, bus: raw, sourceEnd: sourceEnd) else {
                return _QTTypedSubscription(deliver: fast, handler: handler)
            }
            return _QTTypedOptionsSubscription(
                deliver: extras.queue == nil ? _qtSlowDeliverFunction : hop,
                handler: handler, extras: extras)
        }
    }

    /// Subscribes to the named type `type`.
    func _subscribeNamed(
        _ type: String, options: _QTSubscribeOptions,
        handler: @escaping @Sendable (QTNamedEvent) -> Void
    ) -> QTEventToken {
        _subscribe(name: _QTNameInfo.forName(type), options: options, source: nil) { sourceEnd in
            _QTNamedSubscription(
                handler: handler,
                extras: _QTSubscriptionExtras.make(options: options, bus: raw, sourceEnd: sourceEnd))
        }
    }

    /// Makes one engine subscription for `name`; its box is its token.
    func _subscribe(
        name: _QTNameInfo, options: _QTSubscribeOptions,
        source: ((QTEventBus, [String]) -> (@Sendable () -> Void)?)?,
        makeBox: ((@Sendable () -> Void)?) -> _QTSubscription
    )
        -> QTEventToken
    {
        // Every name was checked: by `on(named:)`, `ofSubType(_:)`, or the typed
        // subscribe (`_qtRequireTypeName`).
        guard let cName = name.cName else { _qtMisuse("\(options.call)", _qtNameProblem(name.name, .type) ?? "") }
        if options.buffer != nil && options.queue == nil {
            _qtMisuse(
                "\(options.call) of \(_qtQuoted(name.name))",
                "buffer(_:whenFull:) without atQueue(_:): a delivery on the dispatching thread waits for nothing")
        }
        // Claimed before the engine subscription exists: the source is running before
        // the first event can be expected.
        let sourceEnd = source?(self, options.subTypes)
        let box = makeBox(sourceEnd)
        let userdata = Unmanaged.passRetained(box).toOpaque()

        let subtypes = options.subTypes.map { UnsafePointer(_qtCString($0)) as UnsafePointer<CChar>? }
        defer { for s in subtypes { UnsafeMutablePointer(mutating: s!).deallocate() } }
        var engineToken = qtbus_token(id: 0)
        let before = QTBusError.failuresSoFar
        let status = subtypes.withUnsafeBufferPointer { list -> Int32 in
            var o = qtbus_sub_options()
            o.subtypes = list.isEmpty ? nil : list.baseAddress
            o.subtype_count = list.count
            o.priority = options.priority
            o.flags =
                (options.once ? UInt32(QTBUS_SUB_ONCE) : 0) | (options.replay ? UInt32(QTBUS_SUB_REPLAY) : 0)
                | (options.pattern ? UInt32(QTBUS_SUB_PATTERN) : 0)
            if options.owner == nil {
                return _qtbus_subscribe(raw, cName, &o, _qtDeliver, userdata, _qtSubscriptionRelease, &engineToken)
            }
            return _qtEngineSubscribeOwned(
                raw, cName, &o, _qtDeliver, userdata, _qtSubscriptionRelease,
                alive: _qtOwnerAlive, pin: _qtOwnerPin, unpin: _qtOwnerUnpin, &engineToken)
        }
        if status < 0 {
            // A failed subscribe took nothing: the box and the claim are ours.
            Unmanaged<_QTSubscription>.fromOpaque(userdata).takeRetainedValue().released()
            _qtRefused("\(options.call) of \(_qtQuoted(name.name))", status, since: before)
        }
        box.made(engineToken.id)
        options.bag?.insert(box)
        return box
    }
}

/// What starts `E`'s shared source when a subscription makes it live (`QTSourcedEvent`),
/// or nil for a type without one: for every typed subscribe.
func _qtSourceStart<E: QTEvent>(_ type: E.Type) -> ((QTEventBus, [String]) -> (@Sendable () -> Void)?)? {
    guard let sourced = E.self as? any QTSourcedEvent.Type else { return nil }
    return { bus, subTypes in sourced.startSource(on: bus, subTypes: subTypes) }
}

/// Runs a hop's handler call, `body`, with the headers it held (`headerBits`, 0: none)
/// as the thread's context: the one test a hop without headers pays.
@inlinable @inline(__always)
func _qtRunHop(_ headerBits: UInt, _ body: () -> Void) {
    guard headerBits != 0 else { return body() }
    _qtEngineWithHeldHeaders(OpaquePointer(bitPattern: headerBits).unsafelyUnwrapped, body)
}
