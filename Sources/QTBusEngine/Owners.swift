// Owned subscriptions: the engine's side of Swift's `freeWith(object)`.
//
// Linux has no associated objects and Swift no hook into another object's deinit, so
// nothing tells the engine when an owner goes; it asks.  A subscription made with an
// `OwnerCheck` is asked before each delivery of a dispatch or a replay (the Swift API's
// subscriptions never use engine queues: they hop themselves, and check again when the
// hop runs), and every owned subscription of a type is asked by:
//   - every dispatch of the type, C or Swift, before it delivers (`sweepOwners`): so the
//     one whose owner is gone is disposed there, is never reported as reached, and its
//     release runs when that dispatch ends (rule 1), however its subtypes are filtered;
//   - `qtbus_subscriber_count` of the type, under the lock, before it counts
//     (`disposeOwnerless`), so a gone owner's subscription is not counted.
// Found gone, a subscription is disposed as its token would dispose it.
//
// Asking runs the owner's code in one case: the check loads a weak reference, and if the
// owner's last other reference is dropped meanwhile, dropping the loaded one deinits it
// (user code, which may call the library).  So a check is split in two: `pin` returns a
// strong reference (or nil: gone), which is safe under the lock, and `unpin` drops it,
// which runs after the unlock or outside any lock.
//
// The owned subscriptions of a type are also in the type's `owned` list, so that a
// dispatch walks only them, not the type's other lists.  The list is read as the delivery
// lists are (Registry.swift): writers link and unlink under the lock, a dispatch walks
// it inside its section, and an unlinked node keeps its `next` until it is freed.
import CQtbusShims
import Glibc

/// How the engine asks whether a subscription's owner is still there.
struct OwnerCheck {
    /// A strong reference to the owner of the subscription whose userdata this is; nil
    /// when the owner is gone.  Runs no user code: callable under the lock.
    let pin: @convention(c) (UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer?
    /// Drops what `pin` returned.  May run the owner's deinit: never under the lock.
    let unpin: @convention(c) (UnsafeMutableRawPointer?) -> Void
}

/// A subscription's place in its type's `owned` list (in its SubscriptionExtra).
struct OwnedLink {
    /// Writers only.
    var prev: UnsafeMutablePointer<SubscriptionExtra>? = nil
    /// Atomic: a dispatch's sweep follows it.  Left intact when the extra is unlinked.
    var next: UnsafeMutableRawPointer? = nil
}

/// Links an owned subscription into its type's list.  Under the registry lock.
func linkOwned(_ type: UnsafeMutablePointer<TypeEntry>, _ extra: UnsafeMutablePointer<SubscriptionExtra>) {
    let head = type.pointee.owned
    extra.pointee.ownedLink = OwnedLink(prev: nil, next: head)
    if let h = head { h.assumingMemoryBound(to: SubscriptionExtra.self).pointee.ownedLink.prev = extra }
    // Publish last: a sweep that sees the extra sees it fully initialised.
    qtshim_atomic_store_ptr(type.field(\.owned), UnsafeMutableRawPointer(extra))
}

/// Takes an owned subscription out of its type's list.  Under the registry lock.
func unlinkOwned(_ type: UnsafeMutablePointer<TypeEntry>, _ extra: UnsafeMutablePointer<SubscriptionExtra>) {
    let link = extra.pointee.ownedLink
    if let p = link.prev {
        qtshim_atomic_store_ptr(p.field(\.ownedLink.next), link.next)
    } else {
        qtshim_atomic_store_ptr(type.field(\.owned), link.next)
    }
    if let n = link.next { n.assumingMemoryBound(to: SubscriptionExtra.self).pointee.ownedLink.prev = link.prev }
}

/// Whether the owner of `sub` is gone (then it is disposed here).  Outside the lock,
/// inside a dispatch section; `check` is the subscription's.
@inline(never)
func ownerGone(_ sub: UnsafeMutablePointer<Subscription>, _ check: OwnerCheck) -> Bool {
    if let pin = check.pin(sub.pointee.userdata) {
        check.unpin(pin)
        return false
    }
    if SubState.claimForDispose(sub) { withRegistry { state, after in unlink(&state, sub, &after) } }
    return true
}

/// Disposes the subscriptions of `type` whose owner is gone.  A dispatch of the type
/// calls it, inside its section, before it delivers.
@inline(never)
func sweepOwners(_ type: UnsafeMutablePointer<TypeEntry>) {
    var cursor = qtshim_atomic_load_ptr(type.field(\.owned))
    while let raw = cursor {
        let extra = raw.assumingMemoryBound(to: SubscriptionExtra.self)
        let sub = extra.pointee.sub
        if SubState.isLive(sub) { _ = ownerGone(sub, extra.pointee.owner!) }
        cursor = qtshim_atomic_load_ptr(extra.field(\.ownedLink.next))
    }
}

/// The same, under the registry lock (a count): the gone ones are unlinked here, and the
/// pins dropped after the unlock.
func disposeOwnerless(_ state: inout RegistryState, _ type: UnsafeMutablePointer<TypeEntry>,
                      _ after: inout AfterUnlock) {
    var cursor = type.pointee.owned
    while let raw = cursor {
        let extra = raw.assumingMemoryBound(to: SubscriptionExtra.self)
        // Read before a dispose unlinks this one.
        cursor = extra.pointee.ownedLink.next
        let sub = extra.pointee.sub
        guard SubState.isLive(sub) else { continue }
        let check = extra.pointee.owner!
        if let pin = check.pin(sub.pointee.userdata) {
            after.call(check.unpin, pin)
        } else if SubState.claimForDispose(sub) {
            unlink(&state, sub, &after)
        }
    }
}
