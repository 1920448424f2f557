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
import CQtbusShims
import Dispatch
import QTBusEngine

/// Options collected by a maker.
struct _QTSubscribeOptions {
    var subTypes: [String] = []
    var queue: DispatchQueue? = nil
    var owner: AnyObject? = nil
    var bag: DisposeBag? = nil
    var priority: Int32 = 0
    var once = false
    var replay = false
}

/// The engine's userdata for one Swift subscription.
class _QTSubscription: @unchecked Sendable {
    // @unchecked: every stored property is a `let` set in init except `owner`, a weak
    // reference also written only in init (the runtime makes weak loads thread-safe).
    let token: QTEventToken
    let queue: DispatchQueue?
    let hasOwner: Bool
    weak var owner: AnyObject?
    let once: Bool
    /// The freeWith sweep registry this subscription is in, if any.
    let registry: _QTNameInfo?
    /// Ends the claim a `QTSourcedEvent` made for this subscription.
    let sourceEnd: (@Sendable () -> Void)?

    init(token: QTEventToken, options: _QTSubscribeOptions, registry: _QTNameInfo?,
         sourceEnd: (@Sendable () -> Void)?) {
        self.token = token
        self.queue = options.queue
        self.hasOwner = options.owner != nil
        self.owner = options.owner
        self.once = options.once
        self.registry = registry
        self.sourceEnd = sourceEnd
    }

    /// One engine delivery; `event` is valid only during the call.
    func deliver(_ event: OpaquePointer) {}

    /// Whether a freeWith object was given and is gone.
    @inline(__always)
    final var ownerIsGone: Bool { hasOwner && owner == nil }

    /// Calls `handler` now, or after a hop to the subscription's queue if it is still
    /// live then.
    @inline(__always)
    final func run<V: Sendable>(_ value: V, _ handler: @escaping @Sendable (V) -> Void) {
        guard let queue else {
            handler(value)
            return
        }
        queue.async { [self] in
            if token.isCancelled { return }
            if ownerIsGone {
                token.dispose()
                return
            }
            handler(value)
        }
    }

    /// The release hook: the engine will never call this subscription again.
    final func released() {
        // A ONCE subscription is released as it fires: its hop must still run.
        if !once { token.markCancelled() }
        registry?.unregister(token)
        sourceEnd?()
    }
}

/// A subscription to a typed event `E`.
final class _QTTypedSubscription<E: QTEvent>: _QTSubscription, @unchecked Sendable {
    // @unchecked: immutable after init (see the base class).
    let handler: @Sendable (E) -> Void
    let key = ObjectIdentifier(E.self)

    init(token: QTEventToken, options: _QTSubscribeOptions, registry: _QTNameInfo?,
         sourceEnd: (@Sendable () -> Void)?, handler: @escaping @Sendable (E) -> Void) {
        self.handler = handler
        super.init(token: token, options: options, registry: registry, sourceEnd: sourceEnd)
    }

    override func deliver(_ event: OpaquePointer) {
        if hasOwner && owner == nil {
            token.dispose()
            return
        }
        if let raw = _qtbus_event_object(event),
           Unmanaged<_QTAnyEventBox>.fromOpaque(raw)._withUnsafeGuaranteedRef({ $0.key == key }) {
            // Borrowed: the engine holds the box until this call returns.
            let box = Unmanaged<_QTEventBox<E>>.fromOpaque(raw)
            if queue == nil {
                box._withUnsafeGuaranteedRef { handler($0.value) }
            } else {
                run(box._withUnsafeGuaranteedRef { $0.value }, handler)
            }
            return
        }
        deliverDecoded(event)
    }

    /// An event without a Swift value of type E: decoded from its bytes, if E can.
    @inline(never)
    private func deliverDecoded(_ event: OpaquePointer) {
        guard let bytesType = E.self as? any QTBytesEvent.Type else { return }
        var size = 0
        let data = _qtbus_event_data(event, &size)
        let subType = _qtbus_event_subtype(event).map { String(cString: $0) }
        guard let value = bytesType.init(eventBytes: UnsafeRawBufferPointer(start: data, count: size),
                                         subType: subType) as? E else { return }
        run(value, handler)
    }
}

/// A subscription to a named (C-visible) type: delivers copies.
final class _QTNamedSubscription: _QTSubscription, @unchecked Sendable {
    // @unchecked: immutable after init (see the base class).
    let handler: @Sendable (QTNamedEvent) -> Void

    init(token: QTEventToken, options: _QTSubscribeOptions, registry: _QTNameInfo?,
         handler: @escaping @Sendable (QTNamedEvent) -> Void) {
        self.handler = handler
        super.init(token: token, options: options, registry: registry, sourceEnd: nil)
    }

    override func deliver(_ event: OpaquePointer) {
        if ownerIsGone {
            token.dispose()
            return
        }
        run(QTNamedEvent(copying: event), handler)
    }
}

/// The engine handler of every Swift subscription.
let _qtDeliver: qtbus_handler = { event, userdata in
    // Borrowed: the engine keeps the userdata until the release hook, which cannot run
    // before this call returns.
    Unmanaged<_QTSubscription>.fromOpaque(userdata.unsafelyUnwrapped)
        ._withUnsafeGuaranteedRef { $0.deliver(event.unsafelyUnwrapped) }
}

/// The engine release hook of every Swift subscription.
let _qtSubscriptionRelease: qtbus_release = { userdata in
    Unmanaged<_QTSubscription>.fromOpaque(userdata.unsafelyUnwrapped).takeRetainedValue().released()
}

extension QTEventBus {
    /// Makes one engine subscription for `name`. `makeBox` builds the userdata once the
    /// token, registry and source claim exist.
    func _subscribe(name: _QTNameInfo, options: _QTSubscribeOptions,
                    source: ((QTEventBus, [String]) -> (@Sendable () -> Void)?)?,
                    makeBox: (QTEventToken, _QTNameInfo?, (@Sendable () -> Void)?) -> _QTSubscription) -> QTEventToken {
        let token = QTEventToken()
        guard let cName = name.cName, options.subTypes.allSatisfy(_qtIsValidName) else {
            token.failed(QTBUS_EINVAL.rawValue)
            return token
        }
        // Registered and claimed before the engine subscription exists: no sweep can
        // miss it, and the source is running before the first event can be expected.
        var registry: _QTNameInfo? = nil
        if let owner = options.owner, !options.subTypes.isEmpty {
            name.register(token, owner: owner)
            registry = name
        }
        let sourceEnd = source?(self, options.subTypes)
        let box = makeBox(token, registry, sourceEnd)
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
            return _qtbus_subscribe(raw, cName, &o, _qtDeliver, userdata, _qtSubscriptionRelease, &engineToken)
        }
        if status < 0 {
            // A failed subscribe took nothing: the box, registration and claim are ours.
            token.failed(status)
            Unmanaged<_QTSubscription>.fromOpaque(userdata).takeRetainedValue().released()
            return token
        }
        token.made(engineToken.id)
        options.bag?.insert(token)
        return token
    }
}
