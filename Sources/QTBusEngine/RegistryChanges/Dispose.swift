// SPDX-License-Identifier: MIT
// Disposing tokens, ONCE subscriptions after their delivery, and dispose bags.
//
// A disposed subscription is unlinked under the registry lock (not live from then on:
// its token is refused) and retired: its release runs after the grace period
// (Reclamation.swift), or, for a subscription with a queue, on that queue after its
// queued deliveries.
import CQtbusShims
import CQtbusLibc

// MARK: - Dispose

/// Why a subscription ended, as a DISPOSE trace record says it (qtbus.h).
enum DisposeReason {
    case token, bag, busDestroyed, once, ownerGone

    var text: StaticString {
        switch self {
        case .token: "qtbus_token_dispose"
        case .bag: "qtbus_bag_dispose"
        case .busDestroyed: "qtbus_bus_destroy"
        case .once: "QTBUS_SUB_ONCE"
        case .ownerGone: "owner gone"
        }
    }
}

/// Takes a disposed or fired subscription out of every list and its bag, and retires it
/// after the unlock.  Under the registry lock (an emptied subtype
/// entry only needs its memory freed, so `retireMemory` may take it here).
func unlink(
    _ state: inout RegistryState, _ sub: UnsafeMutablePointer<Subscription>, _ after: inout AfterUnlock,
    _ reason: DisposeReason
) {
    let type = Subscription.type(sub)
    if qtshim_probe_dispose_enabled() { qtshim_probe_dispose(SubscriptionPool.token(sub), sub.pointee.userdata) }
    for i in 0..<Int(sub.pointee.nodeCount) {
        let node = Subscription.node(sub, i)
        SubList.remove(node.pointee.list, node)
        if let entry = node.pointee.subtypeEntry {
            entry.pointee.liveCount -= 1
            if entry.pointee.liveCount == 0 {
                NameTable<SubtypeEntry>.remove(type.pointee.subtypes, entry)
                reclaimer.retireMemory(UnsafeMutableRawPointer(entry), freeSubtypeEntry)
            }
        }
    }
    if let extra = sub.pointee.extra, extra.pointee.owner != nil { unlinkOwned(type, extra) }
    type.pointee.liveCount -= 1
    if type.pointee.liveCount == 0 && !type.pointee.sources.isEmpty {
        typeLivenessChanged(type, live: false, &after)
    }
    let bus = type.pointee.bus
    if type.pointee.isNoSubscriberType {
        _ = qtshim_atomic_fetch_sub_u64(bus.field(&bus.pointee.noSubscriberListeners), 1)
    }
    unlinkFromBag(&state, sub)
    let traced = Bus.traced(QTBUS_TRACE_DISPOSE) | Bus.traced(QTBUS_TRACE_RELEASE)
    if qtshim_atomic_load_u32(bus.field(&bus.pointee.flags)) & traced != 0 { traceUnlink(sub, type, reason, &after) }
    after.retire(UnsafeMutableRawPointer(sub), afterGracePeriod)
}

/// No dispatch can reach the subscription any more, and none can post a delivery of it:
/// release it now, unless deliveries of it are still queued.  Then the release is posted
/// to its queue, which is serial and FIFO, so it runs after the last of them.  (Posted
/// and done are counted on two cache lines, each written by one side, rather than with
/// one reference count bumped on one core and dropped on another for every delivery.  A
/// bounded queue's rules may drop a waiting delivery from another dispatcher's thread:
/// that counts it done under the queue's lock, before the release queued behind it can
/// be taken.)
private let afterGracePeriod: Finalizer = { raw in
    let sub = raw!.assumingMemoryBound(to: Subscription.self)
    guard let extra = sub.pointee.extra, let queue = extra.pointee.queue,
        qtshim_atomic_load_u64(extra.field(&extra.pointee.done))
            != qtshim_atomic_load_u64(extra.field(&extra.pointee.posted))
    else {
        return finalize(sub)
    }
    submit(queue, context: raw) { finalize($0!.assumingMemoryBound(to: Subscription.self)) }
}

/// Releases the userdata and gives the record back; then the RELEASE record, if its
/// bus's hook wanted one at unlink.
private func finalize(_ sub: UnsafeMutablePointer<Subscription>) {
    if Subscription.keptReleaseTracer(sub) { return finalizeTraced(sub) }
    releaseRecord(sub)
}

@inline(never)
private func finalizeTraced(_ sub: UnsafeMutablePointer<Subscription>) {
    let kept = Subscription.releaseTracer(sub)
    releaseRecord(sub)
    emitRelease(kept)
}

/// The `release` USDT probe, when a tracer is attached: one site for both callers of
/// `releaseRecord`.
@inline(never)
private func probeRelease(_ userdata: UnsafeMutableRawPointer?) { qtshim_probe_release(userdata) }

@inline(__always)
private func releaseRecord(_ sub: UnsafeMutablePointer<Subscription>) {
    let release = Subscription.takeRelease(sub)
    let userdata = sub.pointee.userdata
    if let extra = sub.pointee.extra { SubscriptionExtra.free(extra) }
    withRegistry { state in state.pool.give(sub) }
    qtshim_tsan_before_release_hooks()
    if qtshim_probe_release_enabled() { probeRelease(userdata) }
    release?(userdata)
}

/// qtbus_token_dispose.
func disposeToken(_ id: UInt64) -> Int32 {
    withRegistry { state, after in
        guard let sub = state.pool.lookup(id), SubState.claimForDispose(sub) else { return failStaleToken() }
        unlink(&state, sub, &after, .token)
        return QTBUS_OK.rawValue
    }
}

/// After a ONCE subscription's delivery was claimed: unlink and retire it.
func finishOnce(_ sub: UnsafeMutablePointer<Subscription>) {
    withRegistry { state, after in unlink(&state, sub, &after, .once) }
}

// MARK: - Bags

/// A new bag's id; 0 when out of memory.
func makeBag() -> UInt64 {
    guard let bag = tryAllocate(Bag.self) else { return 0 }
    bag.initialize(to: Bag())
    let id = withRegistry { state, _ in state.bags.insert(bag) }
    if id == 0 { free(bag) }
    return id
}

func addToBag(_ bagID: UInt64, _ tokenID: UInt64) -> Int32 {
    withRegistry { state, _ in
        guard let bag = state.bags.lookup(bagID) else { return failStaleBag() }
        guard let sub = state.pool.lookup(tokenID), SubState.isLive(sub) else { return failStaleToken() }
        let slot = UInt32(truncatingIfNeeded: bagID)
        if sub.pointee.bagOrFreeLink == slot + 1 { return QTBUS_OK.rawValue }
        if sub.pointee.bagOrFreeLink != 0 { return fail(QTBUS_EINVAL, "the token is in another bag already") }
        guard bag.pointee.tokens.reserve(1) else { return QTBUS_ENOMEM.rawValue }
        linkToBag(bag, slot: slot, sub)
        return QTBUS_OK.rawValue
    }
}

func disposeBag(_ bagID: UInt64) -> Int32 {
    let found: UnsafeMutablePointer<Bag>? = withRegistry { state, after in
        guard let bag = state.bags.remove(bagID) else { return nil }
        for i in 0..<bag.pointee.tokens.count {
            guard let sub = state.pool.lookup(bag.pointee.tokens[i]) else { continue }
            // Out of the bag first: a fired ONCE subscription is unlinked by its
            // dispatcher later, and must not find this bag's slot then.  One already
            // unlinked (its token resolves until its release) is not touched: its
            // release reads the field unlocked (Trace.swift, `keepReleaseTracer`).
            if sub.pointee.bagOrFreeLink == UInt32(truncatingIfNeeded: bagID) + 1 { sub.pointee.bagOrFreeLink = 0 }
            if SubState.claimForDispose(sub) { unlink(&state, sub, &after, .bag) }
        }
        return bag
    }
    guard let bag = found else { return failStaleBag() }
    bag.pointee.tokens.free()
    bag.deinitialize(count: 1)
    free(bag)
    return QTBUS_OK.rawValue
}
