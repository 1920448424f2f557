// SPDX-License-Identifier: MIT
// A subscription: its pool record, what only some subscriptions carry, and its states.
//
// A subscription's state machine (`live` is direct or routed, blocked or not):
//
//   direct  a synchronous, not-ONCE subscription with its replay gate open: the
//           dispatch loop calls its handler itself (the only state its fast path tests);
//   routed  queued, ONCE, or replaying: its deliveries go through `deliverRouted`
//           (goes to direct when a replay ends, if it can);
//   blocked direct or routed with `blockedBit` set, while `blocks` > 0
//           (qtbus_token_block, Block.swift): live, but no dispatch reaches it: the walk
//           tests `direct`, then `routed`, and leaves the rest out, so a blocked one costs
//           the walk nothing it did not test before.  The bit keeps which of the two it
//           goes back to (a replay that ends meanwhile moves blocked routed to blocked
//           direct).
//
//   live <--block / last unblock (CAS, under the lock)--> blocked (live)
//
//   live --dispose / bag / bus destroy (CAS, under the lock)--> disposed --+
//   live --its ONCE delivery claims it (CAS, dispatch path)---> fired -----+
//                                                                          |
//   unlinked from lists and bag under the lock <---------------------------+
//   -> retired: waits out the grace period (Reclamation.swift)
//   -> released: release(userdata) runs and the record goes back to the pool (its
//      generation moves on: its token is stale for good, not only not live); for a
//      subscription with a queue, in a block posted to that queue, so after every
//      delivery of it that was queued (Dispose.swift, `afterGracePeriod`).
//
// Only `live` subscriptions are invoked; a delivery queued before the dispose finds
// `disposed` and is dropped (lifetime rule 2).  A delivery queued before a block runs:
// it asks `isLive`, and a blocked subscription is live.
import CQtbusShims
import CQtbusLibc

enum SubState {
    static let direct: UInt8 = 0
    static let routed: UInt8 = 1
    /// Set on direct or routed while the subscription is blocked (Block.swift).
    static let blockedBit: UInt8 = 2
    static let blockedDirect: UInt8 = direct | blockedBit
    static let blockedRouted: UInt8 = routed | blockedBit
    static let fired: UInt8 = 4
    static let disposed: UInt8 = 5

    /// Live: direct or routed, blocked or not.
    @inline(__always) static func isLive(_ state: UInt8) -> Bool { state <= blockedRouted }

    @inline(__always)
    static func isLive(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        isLive(qtshim_atomic_load_u8(sub.field(&sub.pointee.state)))
    }

    /// Moves a live subscription to `disposed`; false when it was not live.
    static func claimForDispose(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        while true {
            let state = qtshim_atomic_load_u8(sub.field(&sub.pointee.state))
            guard isLive(state) else { return false }
            if qtshim_atomic_cas_u8(sub.field(&sub.pointee.state), state, disposed) { return true }
        }
    }

    /// Claims a live ONCE subscription's one delivery (to `fired`) for a replayed or
    /// parked event, which was on its way before any block: blocked or not.  False
    /// when it was not live.  (A dispatch claims only `routed`: it leaves blocked
    /// subscriptions out.)
    static func claimStoredOnce(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        while true {
            let state = qtshim_atomic_load_u8(sub.field(&sub.pointee.state))
            guard isLive(state) else { return false }
            if qtshim_atomic_cas_u8(sub.field(&sub.pointee.state), state, fired) { return true }
        }
    }

    /// Sets or clears `blockedBit` on a live subscription; false when it was not live
    /// (a ONCE one fired meanwhile).  Under the registry lock: the CAS is against
    /// the lock-free changes (a ONCE claim, the end of a replay).
    static func setBlocked(_ sub: UnsafeMutablePointer<Subscription>, _ blocked: Bool) -> Bool {
        while true {
            let state = qtshim_atomic_load_u8(sub.field(&sub.pointee.state))
            guard isLive(state) else { return false }
            let next = blocked ? state | blockedBit : state & ~blockedBit
            if qtshim_atomic_cas_u8(sub.field(&sub.pointee.state), state, next) { return true }
        }
    }

    /// The end of a replay: routed to direct, keeping the blocked bit (nothing when it
    /// was disposed or fired meanwhile).
    static func leaveRouted(_ sub: UnsafeMutablePointer<Subscription>) {
        while true {
            let state = qtshim_atomic_load_u8(sub.field(&sub.pointee.state))
            guard state & ~blockedBit == routed else { return }
            if qtshim_atomic_cas_u8(sub.field(&sub.pointee.state), state, state & blockedBit) { return }
        }
    }
}

let subOnce = UInt8(QTBUS_SUB_ONCE)
let subReplay = UInt8(QTBUS_SUB_REPLAY)

/// One subscribe call, however many subtypes it names: an 80-byte record of the
/// registry's pool (`SubscriptionPool`), with its first list node inline.  A token is
/// the record's pool index and generation, so a subscription costs no allocation and
/// no handle-table slot of its own (the memory target is 96 bytes a subscription, and
/// a Swift subscription's 150 counts this record).
/// A queue, further subtypes' nodes and a REPLAY backlog live in `extra`, allocated
/// only for the subscriptions that have one; the release hook then lives there too,
/// so that the record has one word for either.
struct Subscription {
    /// The handle generation of this pool record; moves on when the record is given
    /// back after the release, so the token stays the same while any dispatch can see
    /// the subscription.  Written under the registry lock only (first: see
    /// `field(_:)`).
    var generation: UInt32
    /// The record's index in the pool, fixed for the pool's life.
    let index: UInt32
    /// Atomic: a SubState.  Read by every dispatch that reaches the subscription.
    var state: UInt8
    var flags: UInt8
    /// The inline node plus `nodeCount - 1` nodes in `extra`.
    let nodeCount: UInt16
    var priority: Int32
    /// Registry lock: the bag's slot + 1 while live and in a bag (0: none); the next
    /// free record + 1 while the record is free.
    var bagOrFreeLink: UInt32 = 0
    /// Whether `releaseOrExtra` is the extra (in what was the header's padding).
    let hasExtra: Bool
    /// Registry lock: how many times the subscription is blocked (qtbus_token_block;
    /// `SubState.blockedBit` while above 0).  In padding too: the record stays 80 bytes.
    var blocks: UInt16 = 0
    var handler: qtbus_handler
    var userdata: UnsafeMutableRawPointer?
    /// The release hook, or the extra, which then holds it (`hasExtra`).  Neither is
    /// on the direct delivery path: only routed deliveries and the release read them.
    private var releaseOrExtra: UnsafeMutableRawPointer?
    var node: ListNode

    init(
        generation: UInt32, index: UInt32, state: UInt8, flags: UInt8, nodeCount: UInt16, priority: Int32,
        handler: @escaping qtbus_handler, userdata: UnsafeMutableRawPointer?, release: qtbus_release?,
        extra: UnsafeMutablePointer<SubscriptionExtra>?, node: ListNode
    ) {
        self.generation = generation
        self.index = index
        self.state = state
        self.flags = flags
        self.nodeCount = nodeCount
        self.priority = priority
        self.hasExtra = extra != nil
        self.handler = handler
        self.userdata = userdata
        self.node = node
        if let extra {
            extra.pointee.release = release
            releaseOrExtra = UnsafeMutableRawPointer(extra)
        } else {
            releaseOrExtra = unsafeBitCast(release, to: UnsafeMutableRawPointer?.self)
        }
    }

    var extra: UnsafeMutablePointer<SubscriptionExtra>? {
        @inline(__always) get {
            hasExtra ? releaseOrExtra.unsafelyUnwrapped.assumingMemoryBound(to: SubscriptionExtra.self) : nil
        }
    }

    var release: qtbus_release? {
        hasExtra ? extra.unsafelyUnwrapped.pointee.release : unsafeBitCast(releaseOrExtra, to: qtbus_release?.self)
    }

    /// Takes the release hook out of the record, which then has none: it can never run
    /// twice.  Through the field's address (`field(_:)`): a write through `pointee` is,
    /// to ThreadSanitizer, a write of the whole record, which a lookup under the
    /// registry lock may be reading meanwhile (a stale token's).
    static func takeRelease(_ sub: UnsafeMutablePointer<Subscription>) -> qtbus_release? {
        if let extra = sub.pointee.extra {
            let field = extra.field(&extra.pointee.release)
            defer { field.pointee = nil }
            return field.pointee
        }
        let field = sub.field(&sub.pointee.releaseOrExtra)
        defer { field.pointee = nil }
        return unsafeBitCast(field.pointee, to: qtbus_release?.self)
    }

    /// The queue deliveries run on; nil: on the dispatching thread.
    @inline(__always)
    static func queue(_ sub: UnsafeMutablePointer<Subscription>) -> UnsafeMutablePointer<Queue>? {
        sub.pointee.extra?.pointee.queue
    }

    /// The i-th node (0: the inline one).
    @inline(__always)
    static func node(_ sub: UnsafeMutablePointer<Subscription>, _ i: Int) -> UnsafeMutablePointer<ListNode> {
        i == 0 ? sub.field(&sub.pointee.node) : SubscriptionExtra.nodes(sub.pointee.extra!) + (i - 1)
    }

    /// The subscription a node belongs to (its index is in the low bits of `order`).
    @inline(__always)
    static func of(_ node: UnsafeMutablePointer<ListNode>) -> UnsafeMutablePointer<Subscription> {
        let i = Int(node.pointee.order & ListNode.indexMask)
        if i == 0 {
            return (UnsafeMutableRawPointer(node) - MemoryLayout<Subscription>.offset(of: \Subscription.node)!)
                .assumingMemoryBound(to: Subscription.self)
        }
        return ofExtra(node, i)
    }

    @inline(never)
    private static func ofExtra(_ node: UnsafeMutablePointer<ListNode>, _ i: Int) -> UnsafeMutablePointer<Subscription>
    {
        SubscriptionExtra.owner(of: node - (i - 1))
    }

    /// The subscription's event type.
    static func type(_ sub: UnsafeMutablePointer<Subscription>) -> UnsafeMutablePointer<TypeEntry> {
        let node = sub.field(&sub.pointee.node)
        return node.pointee.wholeType ?? node.pointee.subtypeEntry!.pointee.type
    }
}

/// What only some subscriptions need, followed in memory by `nodeCount - 1` ListNodes.
struct SubscriptionExtra {
    let sub: UnsafeMutablePointer<Subscription>
    /// The subscription's release hook (`Subscription.release`).
    var release: qtbus_release? = nil
    var queue: UnsafeMutablePointer<Queue>? = nil
    /// With `queue`: the subscription's bus, whose queued work its deliveries are
    /// (`beginQueuedWork`); read by a delivery, which keeps the bus allocated.
    var bus: UnsafeMutablePointer<Bus>? = nil
    var backlog: UnsafeMutablePointer<Backlog>? = nil
    /// A Swift `freeWith` subscription's owner check, and its place in the type's
    /// `owned` list (Owners.swift).
    var owner: OwnerCheck? = nil
    var ownedLink = OwnedLink()
    /// Atomic: deliveries posted to `queue` (dispatching threads add).
    var posted: UInt64 = 0
    /// Deliveries that finished on `queue` (only the queue's thread writes it: the queue
    /// is serial).  On its own cache line, so that the two sides of a queued delivery do
    /// not pass one line back and forth on every event.
    var padding: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    var done: UInt64 = 0

    private static var nodesOffset: Int {
        (MemoryLayout<SubscriptionExtra>.stride + 15) & ~15
    }

    /// Storage for an extra with `extraNodes` nodes (uninitialised: see `make`); nil
    /// when out of memory.
    static func allocate(extraNodes: Int) -> UnsafeMutableRawPointer? {
        malloc(nodesOffset + extraNodes * MemoryLayout<ListNode>.stride)
    }

    static func make(_ raw: UnsafeMutableRawPointer, _ sub: UnsafeMutablePointer<Subscription>) -> UnsafeMutablePointer<
        SubscriptionExtra
    > {
        let extra = raw.bindMemory(to: SubscriptionExtra.self, capacity: 1)
        extra.initialize(to: SubscriptionExtra(sub: sub))
        return extra
    }

    @inline(__always)
    static func nodes(_ extra: UnsafeMutablePointer<SubscriptionExtra>) -> UnsafeMutablePointer<ListNode> {
        (UnsafeMutableRawPointer(extra) + nodesOffset).assumingMemoryBound(to: ListNode.self)
    }

    @inline(__always)
    static func owner(of firstNode: UnsafeMutablePointer<ListNode>) -> UnsafeMutablePointer<Subscription> {
        (UnsafeMutableRawPointer(firstNode) - nodesOffset).assumingMemoryBound(to: SubscriptionExtra.self).pointee.sub
    }

    static func free(_ extra: UnsafeMutablePointer<SubscriptionExtra>) {
        if let q = extra.pointee.queue { q.release() }
        if let backlog = extra.pointee.backlog { freeBacklog(backlog) }
        extra.deinitialize(count: 1)
        CQtbusLibc.free(extra)
    }
}
