// SPDX-License-Identifier: MIT
// Owned subscriptions: the engine's side of Swift's `freeWith(object)`.
//
// Linux has no associated objects and Swift no hook into another object's deinit, so
// nothing tells the engine when an owner goes; it asks.  Every owned subscription of a
// type is asked once by every dispatch of the type, C or Swift (of a pattern: by every
// dispatch of a type it matches, PatternDispatch.swift):
//   - one the dispatch reaches, right before its delivery (`deliverRouted`), so a
//     handler that let an owner go in the same dispatch stops the later deliveries to
//     that owner's subscriptions;
//   - the others (their subtypes do not match, they are newer than the dispatch, or a
//     handler stopped it) after the deliveries (`sweepOwners`).
// A replay asks before each of its deliveries too (the Swift API's subscriptions never
// use engine queues: they hop themselves, and check again when the hop runs), and
// `qtbus_subscriber_count` asks, under the lock, before it counts (`disposeOwnerless`).
// Found gone, a subscription is disposed as its token would dispose it: it is never
// reported as reached nor counted, and its release runs when the dispatch that found it
// ends (rule 1), so no later than the end of the next dispatch of its type.
//
// Asking can run the owner's code: the check loads a weak reference, and if the owner's
// last other reference is dropped meanwhile, dropping the loaded one deinits it (user
// code, which may call the library).  Outside the lock that is harmless (`alive`);
// under it, `pin` keeps the loaded reference, and `unpin` drops it after the unlock.
//
// The owned subscriptions of a type are also in the type's `owned` list, so that a
// dispatch walks only them, not the type's other lists.  The list is read as the delivery
// lists are (Registry.swift): writers link and unlink under the lock, a dispatch walks
// it inside its section, and an unlinked node keeps its `next` until it is freed.
import CQtbusShims
import CQtbusLibc

/// How the engine asks whether a subscription's owner is still there.
struct OwnerCheck {
    /// Whether the owner of the subscription whose userdata this is is still there.
    /// May run the owner's deinit: never under the lock.
    let alive: @convention(c) (UnsafeMutableRawPointer?) -> Bool
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
    qtshim_atomic_store_ptr(type.field(&type.pointee.owned), UnsafeMutableRawPointer(extra))
}

/// Takes an owned subscription out of its type's list.  Under the registry lock.
func unlinkOwned(_ type: UnsafeMutablePointer<TypeEntry>, _ extra: UnsafeMutablePointer<SubscriptionExtra>) {
    let link = extra.pointee.ownedLink
    if let p = link.prev {
        qtshim_atomic_store_ptr(p.field(&p.pointee.ownedLink.next), link.next)
    } else {
        qtshim_atomic_store_ptr(type.field(&type.pointee.owned), link.next)
    }
    if let n = link.next { n.assumingMemoryBound(to: SubscriptionExtra.self).pointee.ownedLink.prev = link.prev }
    if type.pointee.owned == nil {
        qtshim_atomic_store_u64(type.field(&type.pointee.seq), type.pointee.seq & ~TypeEntry.hasOwned)
    }
}

/// Whether the owner of `sub` is gone (then it is disposed here).  Outside the lock,
/// inside a dispatch section; `check` is the subscription's.
@inline(never)
func ownerGone(_ sub: UnsafeMutablePointer<Subscription>, _ check: OwnerCheck) -> Bool {
    if check.alive(sub.pointee.userdata) { return false }
    if SubState.claimForDispose(sub) { withRegistry { state, after in unlink(&state, sub, &after, .ownerGone) } }
    return true
}

/// After a dispatch of `type` delivered: asks the owned subscriptions it did not reach.
/// `specific` and `last` are the dispatch's (Dispatch.swift); `stopped`: a handler
/// stopped it, so some it would have reached were not asked.  Inside its section.
@inline(never)
func sweepOwners(
    _ type: UnsafeMutablePointer<TypeEntry>, _ specific: UnsafeMutablePointer<SubtypeEntry>?,
    _ last: UInt64, stopped: Bool
) {
    var cursor = qtshim_atomic_load_ptr(type.field(&type.pointee.owned))
    while let raw = cursor {
        let extra = raw.assumingMemoryBound(to: SubscriptionExtra.self)
        let sub = extra.pointee.sub
        // A blocked one was passed over unasked: asked here, so that its owner's end
        // is noticed by the next dispatch all the same.
        let state = qtshim_atomic_load_u8(sub.field(&sub.pointee.state))
        if SubState.isLive(state) && (stopped || state & SubState.blockedBit != 0 || !reached(sub, specific, last)) {
            _ = ownerGone(sub, extra.pointee.owner!)
        }
        cursor = qtshim_atomic_load_ptr(extra.field(&extra.pointee.ownedLink.next))
    }
}

/// Whether a dispatch with this `specific` subtype entry and `last` order reached `sub`
/// (so asked about its owner on the way).
private func reached(
    _ sub: UnsafeMutablePointer<Subscription>, _ specific: UnsafeMutablePointer<SubtypeEntry>?,
    _ last: UInt64
) -> Bool {
    guard sub.pointee.node.order <= last else { return false }
    for i in 0..<Int(sub.pointee.nodeCount) {
        let node = Subscription.node(sub, i)
        if node.pointee.wholeType != nil || (specific != nil && node.pointee.subtypeEntry == specific) { return true }
    }
    return false
}

/// The same, under the registry lock (a count): the gone ones are unlinked here, and the
/// pins dropped after the unlock.
func disposeOwnerless(
    _ state: inout RegistryState, _ type: UnsafeMutablePointer<TypeEntry>,
    _ after: inout AfterUnlock
) {
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
            unlink(&state, sub, &after, .ownerGone)
        }
    }
}
