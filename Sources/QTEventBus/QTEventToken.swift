// The handle of one Swift subscription.
//
// State of a subscription, as the Swift layer sees it:
//   made      the engine token is not known yet (inside subscribe; a REPLAY delivery
//             can already run, and may dispose);
//   live      `engineID` set, not cancelled;
//   cancelled `dispose()` ran (or the subscription was released, or its freeWith object
//             is gone): hops already queued by `atQueue` are dropped, and the engine
//             token is disposed by whichever of `dispose()` and the end of subscribe
//             sees both the id and the flag (both may try: the second gets ESTALE,
//             which generations make harmless).
// The engine owns the rest (lifetime rules 1-3 of qtbus.h).
import CQtbusShims
import QTBusEngine
import Synchronization

/// One subscription, as returned by ``QTEventSubscriberMaker/next(_:)-33cel``.
///
/// Call ``dispose()`` to end it: after `dispose()` returns the handler is never started
/// again, deliveries already queued with ``QTEventSubscriberMaker/atQueue(_:)``
/// included; a call already running on another thread finishes. The handler closure
/// is released once no call of it is running (lifetime rule 1 of qtbus.h).
///
/// A token does not dispose its subscription when it is deallocated (as in
/// QTEventBus): keep the token, put it in a ``QTDisposeBag``, or use
/// ``QTEventSubscriberMaker/freeWith(_:)``. The token does not retain the handler.
public final class QTEventToken: Hashable, Sendable, CustomStringConvertible {
    private let engineID = Atomic<UInt64>(0)
    private let cancelled = Atomic<Bool>(false)

    init() {}

    /// Ends the subscription (see ``QTEventToken``). Safe from any thread, from inside
    /// the handler, and more than once.
    public func dispose() {
        guard !cancelled.exchange(true, ordering: .sequentiallyConsistent) else { return }
        let id = engineID.load(ordering: .sequentiallyConsistent)
        if id != 0 { _ = _qtbus_token_dispose(qtbus_token(id: id)) }
    }

    /// Whether the subscription is live: made, not disposed, not fired (``QTEventSubscriberMaker/once()``),
    /// and its bus still exists.
    public var isActive: Bool {
        let id = engineID.load(ordering: .acquiring)
        return id != 0 && !isCancelled && _qtbus_token_is_active(qtbus_token(id: id)) == 1
    }

    /// Always nil: a subscription the bus refuses traps instead, with a message naming
    /// the name and the reason (``QTEventSubscriberMaker/next(_:)-33cel``).
    @available(*, deprecated, message: "a subscription the bus refuses traps; a token always describes a made one")
    public var error: QTBusError? { nil }

    /// The engine token's id (`qtbus_token.id`), 0 when the subscription was not made.
    /// C code in the same process may dispose it with `qtbus_token_dispose`.
    public var id: UInt64 { engineID.load(ordering: .acquiring) }

    /// Puts the token in `bag`, which disposes it when the bag is disposed or
    /// deallocated.
    public func disposed(by bag: QTDisposeBag) {
        bag.insert(self)
    }

    /// Identity.
    public static func == (a: QTEventToken, b: QTEventToken) -> Bool { a === b }

    /// Identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// `QTEventToken(id, active)`.
    public var description: String { "QTEventToken(\(id), \(isActive ? "active" : "inactive"))" }

    // MARK: internal

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Marks the subscription ended without disposing it (its release hook ran).
    func markCancelled() { cancelled.store(true, ordering: .releasing) }

    /// The end of a successful subscribe.
    func made(_ id: UInt64) {
        engineID.store(id, ordering: .sequentiallyConsistent)
        if cancelled.load(ordering: .sequentiallyConsistent) { _ = _qtbus_token_dispose(qtbus_token(id: id)) }
    }
}
