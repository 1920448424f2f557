// SPDX-License-Identifier: MIT
// A dispose bag's record and how a subscription is linked into it and out of it.
import CQtbusShims
import CQtbusLibc

/// A dispose bag: the tokens put in it.  A subscription disposed on its own stays
/// listed (it is not live, so the bag skips it); `live` counts the others, and the
/// list is compacted when most of it is stale, so a long-lived bag with churn stays
/// small without the three link words every subscription would otherwise carry.
struct Bag {
    var tokens = Vector<UInt64>()
    var live = 0
}

/// Under the registry lock; the subscription is live and in no bag, and the bag has
/// room for one more token (`bag.pointee.tokens.reserve(1)`).
func linkToBag(_ bag: UnsafeMutablePointer<Bag>, slot: UInt32, _ sub: UnsafeMutablePointer<Subscription>) {
    sub.pointee.bagOrFreeLink = slot + 1
    bag.pointee.tokens.appendReserved(SubscriptionPool.token(sub))
    bag.pointee.live += 1
}

/// Under the registry lock, as the subscription is unlinked (no longer live).  Leaves
/// `bagOrFreeLink` 0 (Trace.swift's `keepReleaseTracer` relies on it).
func unlinkFromBag(_ state: inout RegistryState, _ sub: UnsafeMutablePointer<Subscription>) {
    let link = sub.pointee.bagOrFreeLink
    sub.pointee.bagOrFreeLink = 0
    guard link != 0, let bag = state.bags.lookup(slot: link - 1) else { return }
    bag.pointee.live -= 1
    if bag.pointee.tokens.count >= 64 && bag.pointee.live * 4 < bag.pointee.tokens.count {
        let pool = state.pool
        bag.pointee.tokens.retain { pool.lookup($0).map { SubState.isLive($0) } ?? false }
    }
}
