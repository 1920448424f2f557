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
// hook ran; the box goes when the last queued hop holding it has run).
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
// Memory: the box is the only Swift object of a plain subscription besides its token
// (and the handler closure's own context, if it captures anything): deliver, handler
// and state in one object, the slow path a method rather than a closure with a context
// of its own; options (queue, freeWith, source) add one `_QTSubscriptionExtras`.
import CQtbusShims
import Dispatch
import QTBusEngine

/// Options collected by a maker.
@usableFromInline
struct _QTSubscribeOptions {
    var subTypes: [String] = []
    var queue: DispatchQueue? = nil
    var owner: AnyObject? = nil
    var bag: QTDisposeBag? = nil
    var priority: Int32 = 0
    var once = false
    var replay = false

    @usableFromInline
    init() {}
}

/// What the engine calls for one subscription: `(box, event)`.
@usableFromInline
typealias _QTDeliverFunction = @Sendable (_QTSubscription, OpaquePointer) -> Void

/// The engine's userdata for one Swift subscription, and the whole Swift side of it:
/// one object (with the token) per subscription. This base holds what `_qtDeliver`
/// reads; `_QTHandlerSubscription` puts the handler right after it, so that a plain
/// delivery reads one line, and the rest of the state after that.
@usableFromInline
class _QTSubscription: @unchecked Sendable {
    // @unchecked: immutable after init.
    /// Called by `_qtDeliver` for every delivery. (Not optional: an optional closure is
    /// stored at maximal abstraction and costs two reabstraction thunks per call.)
    @usableFromInline let deliver: _QTDeliverFunction

    init(deliver: @escaping _QTDeliverFunction) {
        self.deliver = deliver
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
/// claim. Apart so that a plain subscription does not carry it (32 bytes less per
/// subscription).
final class _QTSubscriptionExtras: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init except `owner`, a weak
    // reference also written only in init (the runtime makes weak loads thread-safe).
    let queue: DispatchQueue?
    weak var owner: AnyObject?
    let hasOwner: Bool
    /// Ends the claim a `QTSourcedEvent` made for this subscription.
    let sourceEnd: (@Sendable () -> Void)?

    /// Nil when there is nothing to keep.
    static func make(options: _QTSubscribeOptions, sourceEnd: (@Sendable () -> Void)?) -> _QTSubscriptionExtras? {
        if options.queue == nil && options.owner == nil && sourceEnd == nil { return nil }
        return _QTSubscriptionExtras(options: options, sourceEnd: sourceEnd)
    }

    private init(options: _QTSubscribeOptions, sourceEnd: (@Sendable () -> Void)?) {
        queue = options.queue
        owner = options.owner
        hasOwner = options.owner != nil
        self.sourceEnd = sourceEnd
    }
}

/// A subscription whose handler takes `V`: the typed event, or QTNamedEvent.
@usableFromInline
class _QTHandlerSubscription<V: Sendable>: _QTSubscription, @unchecked Sendable {
    // @unchecked: immutable after init.
    /// First: the fast path reads it right after `deliver`.
    @usableFromInline let handler: @Sendable (V) -> Void
    let token: QTEventToken
    let extras: _QTSubscriptionExtras?
    let once: Bool

    init(deliver: @escaping _QTDeliverFunction, handler: @escaping @Sendable (V) -> Void, token: QTEventToken,
         options: _QTSubscribeOptions, sourceEnd: (@Sendable () -> Void)?) {
        self.handler = handler
        self.token = token
        self.extras = _QTSubscriptionExtras.make(options: options, sourceEnd: sourceEnd)
        self.once = options.once
        super.init(deliver: deliver)
    }

    override final var owner: AnyObject? { extras?.owner }

    /// Whether a freeWith object was given and is gone; if so, ends the subscription.
    /// A hop asks when it runs; a delivery needs not: the engine asked just before it.
    @inline(__always)
    final func expireIfOwnerGone() -> Bool {
        guard let extras, extras.hasOwner && extras.owner == nil else { return false }
        token.dispose()
        return true
    }

    /// Calls the handler with `value` now, or after a hop to the subscription's queue
    /// if it is still live then (the hop keeps this object, so the handler, alive). A
    /// request (`event`) stays open until the hop has run, so its completion comes after
    /// this handler, as after an engine-queued one.
    final func run(_ value: V, _ event: OpaquePointer) {
        guard let queue = extras?.queue else {
            handler(value)
            return
        }
        // The held request travels as an integer, not as an Optional: an Optional in the
        // closure's context made its destruction fetch `Optional<...>` metadata through
        // the runtime on every hop (the Swift benchmark's queued rows).
        let heldBits = UInt(bitPattern: _QTHeldRequest(event)?.raw)  // 0: not a request
        queue.async { [self] in
            if !(token.isCancelled || expireIfOwnerGone()) { handler(value) }
            if heldBits != 0 { _qtEngineReleaseHeldRequest(OpaquePointer(bitPattern: heldBits)!) }
        }
    }

    override final func released() {
        // A ONCE subscription is released as it fires: its hop must still run.
        if !once { token.markCancelled() }
        extras?.sourceEnd?()
    }
}

/// A subscription to the typed event `E`: the fast path reads `handler` from here.
@usableFromInline
final class _QTTypedSubscription<E: QTEvent>: _QTHandlerSubscription<E>, @unchecked Sendable {
    // @unchecked: no stored properties of its own.

    /// The general delivery: hops, decoding (and freeWith, which the engine checked).
    override func slowDeliver(_ event: OpaquePointer) {
        if let cell = _qtbus_event_object(event),
           cell.load(as: UInt.self) == UInt(bitPattern: ObjectIdentifier(E.self)) {
            run((cell + _qtCellValueOffset(E.self)).assumingMemoryBound(to: E.self).pointee, event)
            return
        }
        deliverDecoded(event)
    }

    /// No Swift value of type E: C dispatched it, or a Swift named dispatch did.  Out of
    /// line so that `slowDeliver` has no `E?` local: unspecialized code fetches the
    /// metadata of `Optional<E>` on entry to a function that has one, at about 320
    /// instructions a call (callgrind), even on the path that never uses it.
    @inline(never)
    private func deliverDecoded(_ event: OpaquePointer) {
        guard let bytesType = E.self as? any QTBytesEvent.Type else { return }
        var size = 0
        let data = _qtbus_event_data(event, &size)
        let subType = _qtbus_event_subtype(event).map { String(cString: $0) }
        guard let value = bytesType.init(eventBytes: UnsafeRawBufferPointer(start: data, count: size),
                                         subType: subType) as? E else { return }
        run(value, event)
    }
}

/// A subscription to a named type: every delivery copies the event.
final class _QTNamedSubscription: _QTHandlerSubscription<QTNamedEvent>, @unchecked Sendable {
    // @unchecked: no stored properties of its own.
    override func slowDeliver(_ event: OpaquePointer) {
        run(QTNamedEvent(copying: event), event)
    }
}

/// The fast delivery of a plain typed subscription (no queue, no freeWith): built
/// specialized for `E` in the subscriber's module, it captures nothing (no closure
/// context to load), checks the cell key and calls the handler with the value read in
/// place. Anything else goes to the slow path.
@inlinable
func _qtTypedFastDeliver<E: QTEvent>(_: E.Type) -> _QTDeliverFunction {
    { subscription, event in
        if let cell = _qtEngineEventObject(event),
           cell.load(as: UInt.self) == UInt(bitPattern: ObjectIdentifier(E.self)) {
            // Borrowed: the engine keeps the cell until this call has returned.
            unsafeDowncast(subscription, to: _QTTypedSubscription<E>.self)
                .handler((cell + _qtCellValueOffset(E.self)).assumingMemoryBound(to: E.self).pointee)
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
    /// Subscribes to the typed event `E`. `fast` is the plain-subscription path, built
    /// by the (specialized) caller with `_qtTypedFastDeliver`.
    @usableFromInline
    func _subscribeTyped<E: QTEvent>(_ type: E.Type, options: _QTSubscribeOptions,
                                     fast: @escaping _QTDeliverFunction,
                                     handler: @escaping @Sendable (E) -> Void) -> QTEventToken {
        let record = _QTTypeTable.record(for: E.self)
        var source: ((QTEventBus, [String]) -> (@Sendable () -> Void)?)? = nil
        if let sourced = E.self as? any QTSourcedEvent.Type {
            source = { bus, subTypes in sourced.startSource(on: bus, subTypes: subTypes) }
        }
        // Plain (no queue, no freeWith): the specialized fast path; else the slow one.
        let plain = options.queue == nil && options.owner == nil
        return _subscribe(name: record.pointee.names.takeUnretainedValue(), options: options,
                          source: source) { token, sourceEnd in
            _QTTypedSubscription(deliver: plain ? fast : _qtSlowDeliverFunction, handler: handler, token: token, options: options,
                                 sourceEnd: sourceEnd)
        }
    }

    /// Subscribes to the named type `type`.
    func _subscribeNamed(_ type: String, options: _QTSubscribeOptions,
                         handler: @escaping @Sendable (QTNamedEvent) -> Void) -> QTEventToken {
        _subscribe(name: _QTNameInfo.forName(type), options: options, source: nil) { token, sourceEnd in
            _QTNamedSubscription(deliver: _qtSlowDeliverFunction, handler: handler, token: token, options: options,
                                 sourceEnd: sourceEnd)
        }
    }

    /// Makes one engine subscription for `name`.
    func _subscribe(name: _QTNameInfo, options: _QTSubscribeOptions,
                            source: ((QTEventBus, [String]) -> (@Sendable () -> Void)?)?,
                            makeBox: (QTEventToken, (@Sendable () -> Void)?) -> _QTSubscription)
        -> QTEventToken {
        let token = QTEventToken()
        guard let cName = name.cName, options.subTypes.allSatisfy(_qtIsValidName) else {
            _qtRefusedSubscription(name.name, options.subTypes, QTBUS_EINVAL.rawValue)
        }
        // Claimed before the engine subscription exists: the source is running before
        // the first event can be expected.
        let sourceEnd = source?(self, options.subTypes)
        let box = makeBox(token, sourceEnd)
        let userdata = Unmanaged.passRetained(box).toOpaque()

        let subtypes = options.subTypes.map { UnsafePointer(_qtCString($0)) as UnsafePointer<CChar>? }
        defer { for s in subtypes { UnsafeMutablePointer(mutating: s!).deallocate() } }
        var engineToken = qtbus_token(id: 0)
        let status = subtypes.withUnsafeBufferPointer { list -> Int32 in
            var o = qtbus_sub_options()
            o.subtypes = list.isEmpty ? nil : list.baseAddress
            o.subtype_count = list.count
            o.priority = options.priority
            o.flags = (options.once ? UInt32(QTBUS_SUB_ONCE) : 0) | (options.replay ? UInt32(QTBUS_SUB_REPLAY) : 0)
            if options.owner == nil {
                return _qtbus_subscribe(raw, cName, &o, _qtDeliver, userdata, _qtSubscriptionRelease, &engineToken)
            }
            return _qtEngineSubscribeOwned(raw, cName, &o, _qtDeliver, userdata, _qtSubscriptionRelease,
                                           alive: _qtOwnerAlive, pin: _qtOwnerPin, unpin: _qtOwnerUnpin, &engineToken)
        }
        if status < 0 {
            // A failed subscribe took nothing: the box and the claim are ours.
            Unmanaged<_QTSubscription>.fromOpaque(userdata).takeRetainedValue().released()
            _qtRefusedSubscription(name.name, options.subTypes, status)
        }
        token.made(engineToken.id)
        options.bag?.insert(token)
        return token
    }
}

/// A subscription the bus refused traps, as an index out of range does: the names are
/// the program's (an empty or over-long name or subtype), or the bus is being
/// destroyed, or memory ran out.  The message says which name and why.
func _qtRefusedSubscription(_ type: String, _ subTypes: [String], _ status: Int32) -> Never {
    var why = String(cString: _qtbus_strerror(status))
    if status == QTBUS_EINVAL.rawValue {
        if !_qtIsValidName(type) {
            why = "the type name \"\(type)\" is not 1 to 255 bytes"
        } else if let bad = subTypes.first(where: { !_qtIsValidName($0) }) {
            why = "the subtype \"\(bad)\" is not 1 to 255 bytes"
        }
    }
    fatalError("QTEventBus: cannot subscribe to \"\(type)\": \(why)")
}
