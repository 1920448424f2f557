// SPDX-License-Identifier: MIT
// The handle of one Swift subscription, and the base class of the subscription itself
// (_Subscription.swift): a plain subscription is one Swift object, this token.
//
// State of a subscription, as the Swift layer sees it:
//   made      the engine token is not known yet (inside subscribe; a REPLAY delivery
//             can already run, and may dispose);
//   live      the engine id set, not cancelled;
//   cancelled `dispose()` ran (or the subscription was released, or its freeWith object
//             is gone): hops already queued by `atQueue` are dropped, and the engine
//             token is disposed by whichever of `dispose()` and the end of subscribe
//             comes second (id and flag share one atomic word, so exactly one of them
//             sees both).
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
/// ``QTEventSubscriberMaker/freeWith(_:)``. Once the subscription has ended (disposed,
/// fired once, its freeWith object gone, its bus destroyed) and no call of the handler
/// is running, the token no longer holds the handler closure.
public class QTEventToken: Hashable, @unchecked Sendable, CustomStringConvertible {
    // Not final: each subscription is its token, a subclass (_Subscription.swift), so
    // that a plain subscription is one object. Not open: nothing outside subclasses it.
    // @unchecked: `state` is atomic; the subclasses say why theirs are safe.
    /// The engine token's id, and `cancelledBit` (a bit no id has: the engine keeps it
    /// clear) once cancelled.
    private let state = Atomic<UInt64>(0)

    @inline(__always)
    private static var cancelledBit: UInt64 { _qtEngineTokenSpareBit }

    init() {}

    /// Ends the subscription (see ``QTEventToken``). Safe from any thread, from inside
    /// the handler, and more than once: a subscription that had ended already (disposed,
    /// fired once, its freeWith object gone, its bus destroyed, or disposed by C code
    /// through ``id``) is what was asked for, so that is not a refusal.
    public final func dispose() {
        let old = state.bitwiseOr(Self.cancelledBit, ordering: .sequentiallyConsistent).oldValue
        // QTBUS_ESTALE, its only failure, says the subscription had ended already.
        if old != 0 && old & Self.cancelledBit == 0 { _ = _qtbus_token_dispose(qtbus_token(id: old)) }
    }

    /// Whether the subscription is live: made, not disposed, not fired (``QTEventSubscriberMaker/once()``),
    /// and its bus still exists.
    public final var isActive: Bool {
        let s = state.load(ordering: .acquiring)
        return s != 0 && s & Self.cancelledBit == 0 && _qtbus_token_is_active(qtbus_token(id: s)) == 1
    }

    /// Blocks the subscription without ending it, as GLib's `g_signal_handler_block`
    /// and Qt's `QSignalBlocker`: while it is blocked, the dispatches made leave it out
    /// (its handler is not called, nothing is queued for it, it is not counted in what
    /// `dispatch` returns; an event all of whose subscriptions are blocked reaches
    /// nobody). Blocks nest: it is blocked until ``unblock()`` was called as many times
    /// as `block()` (at most 65,535 blocks at once: one more traps).
    ///
    /// A dispatch that begins after `block()` returned leaves it out; one already
    /// running on another thread may still call it. Deliveries made before the block
    /// still run: hops already queued by ``QTEventSubscriberMaker/atQueue(_:)``, a
    /// replay. The subscription stays live: ``isActive`` is true, it is counted,
    /// ``dispose()`` ends it with no unblock first. A ``QTEventSubscriberMaker/once()``
    /// subscription does not fire while blocked. Safe from any thread and from inside
    /// its own handler.
    ///
    /// ```swift
    /// let token = bus.on(LoginEvent.self).next { print($0.userId) }
    /// try token.block()
    /// bus.dispatch(LoginEvent(userId: "alice"))   // not printed
    /// try token.unblock()
    /// ```
    ///
    /// - Throws: ``QTBusError/stale`` once the subscription has ended (disposed, fired
    ///   once, its freeWith object gone, its bus destroyed), or before it was made (from
    ///   its own replay, inside the call that subscribes it).
    public final func block() throws(QTBusError) {
        try blockCall("QTEventToken.block()", _qtbus_token_block)
    }

    /// Undoes one ``block()``: once unblocked as many times as blocked, the dispatches
    /// that begin afterwards reach the subscription again.
    ///
    /// An unblock with no block to undo is a programmer error: it traps, as an index
    /// out of range does (see "Errors" in the overview).
    ///
    /// - Throws: ``QTBusError/stale`` as ``block()`` does (a subscription that ended
    ///   while blocked has nothing left to unblock).
    public final func unblock() throws(QTBusError) {
        try blockCall("QTEventToken.unblock()", _qtbus_token_unblock)
    }

    /// Always nil: a subscription the bus refuses traps instead, with a message naming
    /// the name and the reason (``QTEventSubscriberMaker/next(_:)-33cel``).
    @available(*, deprecated, message: "a subscription the bus refuses traps; a token always describes a made one")
    public final var error: QTBusError? { nil }

    /// The engine token's id (`qtbus_token.id`), 0 when the subscription was not made.
    /// C code in the same process may dispose it with `qtbus_token_dispose`.
    public final var id: UInt64 { state.load(ordering: .acquiring) & ~Self.cancelledBit }

    /// Puts the token in `bag`, which disposes it when the bag is disposed or
    /// deallocated.
    public final func disposed(by bag: QTDisposeBag) {
        bag.insert(self)
    }

    /// Identity.
    public static func == (a: QTEventToken, b: QTEventToken) -> Bool { a === b }

    /// Identity.
    public final func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    /// `QTEventToken(id, active)`.
    public final var description: String { "QTEventToken(\(id), \(isActive ? "active" : "inactive"))" }

    // MARK: internal

    /// `call` (qtbus_token_block or _unblock) on the engine token: QTBUS_EINVAL (an
    /// unblock too many, a block over the limit) traps, QTBUS_ESTALE throws. Cancelled
    /// on this side (`dispose()` ran) is stale whatever the engine says yet.
    private final func blockCall(_ name: StaticString, _ call: (qtbus_token) -> Int32) throws(QTBusError) {
        let s = state.load(ordering: .acquiring)
        if s & Self.cancelledBit != 0 {
            throw QTBusError(.stale, message: "\(name): the token is disposed")
        }
        let before = QTBusError.failuresSoFar
        try _qtThrowing(call(qtbus_token(id: s)), since: before, "\(name)")
    }

    final var isCancelled: Bool { state.load(ordering: .acquiring) & Self.cancelledBit != 0 }

    /// Marks the subscription ended without disposing it (its release hook ran).
    final func markCancelled() { state.bitwiseOr(Self.cancelledBit, ordering: .releasing) }

    /// The end of a successful subscribe.
    final func made(_ id: UInt64) {
        let old = state.bitwiseOr(id, ordering: .sequentiallyConsistent).oldValue
        if old & Self.cancelledBit != 0 { _ = _qtbus_token_dispose(qtbus_token(id: id)) }
    }
}
