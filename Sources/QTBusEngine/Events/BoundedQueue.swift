// SPDX-License-Identifier: MIT
// Bounded queues (qtbus_queue_set_limit): a queue's waiting work in a ring of slots
// under a lock, so that a limit can be kept and an overflow rule applied.
//
// Why a ring under a lock rather than the lock-free list of Queue.swift: every rule
// but GROW looks at what is waiting (how many; the oldest delivery; LATEST's waiting
// delivery of the same subscription and names) and changes it in place, and BLOCK needs
// a place for dispatchers to wait in order.  The slots are allocated when the limit is
// set, one per delivery the capacity allows, so a flood allocates nothing here; only
// what the rules accept beyond the capacity (GROW, the dispatches that must not wait)
// grows the ring.  A queue keeps its ring once it has one (a later GROW limit makes it
// unbounded again): work never goes back to the list, where it could pass work still
// in the ring.
//
// Every piece of work of such a queue goes through the ring, deliveries and other work
// (a release, an execution) alike, so they stay one FIFO.  A delivery counts against
// the capacity from the moment it is accepted until its handler starts; other work
// never counts.  A created queue drains the ring in one libdispatch item per burst,
// taking up to `batchSize` slots under one lock: those stay counted as waiting
// (`Ring.hand`) until each handler starts, which the drain records without the lock (a
// lock per delivery on both sides made producer and consumer collide on every one:
// docs/perf-notes.md, "A bounded queue's drain takes a batch").  The main queue posts
// one item per piece of work, each running the oldest: main-queue work of C and Swift
// stays one FIFO.
//
// Deliveries the rules cannot reach in the ring count all the same: those the drain
// took, and those posted before the queue had a ring (they wait on the list, or as
// libdispatch items of their own), counted by the queue (`enqueued` - `started`).  All
// of them are older than anything in the ring, and they start in the order they came,
// so when DROP_OLDEST or LATEST must drop the oldest waiting delivery and it is one of
// them, the rule dooms "the next delivery to start" (`Ring.hand`): the dispatcher
// counts the drop, and the next delivery to start takes the doom and ends without its
// handler, reported dropped then.  Replacing (LATEST) acts on the ring only.
//
// The dispatcher side (what a dropped delivery does: its trace record, its payload's
// release) is in Dispatch/QueuedDelivery.swift: this file only decides and hands back.
// What each rule decides is in Overflow.swift, which the Swift API's buffered
// subscriptions ask too (QTEventBus's _HopBuffer.swift); this file applies it to the ring.
import CQtbusShims
import CQtbusLibc

/// One piece of waiting work: a delivery (`sub` set), other work (`work` set), or the
/// place of a delivery dropped from the middle (neither).
struct Slot {
    var work: UnsafeMutablePointer<WorkNode>? = nil
    /// A Store type named down here (scripts/layers.py, TYPES).
    var sub: UnsafeMutablePointer<Subscription>? = nil
    var payload: UnsafeMutablePointer<Payload>? = nil
    /// The bus whose hook takes DELIVER records of it.
    var tracing: UnsafeMutableRawPointer? = nil
    /// The delivery's bus and subscription token: what a drop reports, read when it was
    /// offered (a dropped delivery's subscription may be gone by then).
    var bus: UnsafeMutableRawPointer? = nil
    var token: UInt64 = 0
    /// The subscription's count of deliveries done (Dispose.swift): a drop counts there
    /// under the lock, while the subscription is surely still there.
    var done: UnsafeMutablePointer<UInt64>? = nil
    var once = false
}

/// A dispatcher waiting for room (BLOCK), on its own stack, in the ring's FIFO of them.
struct Blocked {
    var next: UnsafeMutablePointer<Blocked>? = nil
    /// Futex word, written under the ring's lock: one of the `Blocked.*` answers.
    var answer: UInt32 = Blocked.waiting
    /// The bus the delivery is of (qtbus_bus_destroy wakes that bus's dispatchers).
    let bus: UnsafeMutableRawPointer

    static let waiting: UInt32 = 0
    /// Room was kept for it (`Ring.reserved`).
    static let admitted: UInt32 = 1
    static let busDestroyed: UInt32 = 2
    static let queueReleased: UInt32 = 3
    /// The limit changed: decide again.
    static let retry: UInt32 = 4
}

/// What became of an offered delivery.
struct Offered {
    /// It waits in the ring (the dispatch counts it).
    var accepted: Bool
    /// The delivery that left for good: the offered one (not accepted), or one it
    /// pushed out; the caller finishes it outside the lock.
    var dropped: Slot?
    /// The DROP record's `function`.
    var why: StaticString
}

struct Ring {
    /// First, so that the base address ThreadSanitizer reports Swift's writes through
    /// `pointee` at is a field only lock holders touch (see `field(_:)` in Lock.swift).
    var slots: UnsafeMutablePointer<Slot>
    /// The futex lock over every field but `runDelivery`.
    var lock: UInt32 = 0
    var size: Int
    var head = 0
    /// Slots in use from `head` on (deliveries, other work, and dropped places).
    var used = 0
    /// Deliveries in the ring.  With `hand` and the queue's deliveries from before the
    /// ring, what the capacity bounds.
    var inRing = 0
    /// Room kept for admitted dispatchers that have not put their delivery in yet.
    var reserved = 0
    /// `hand.inHand` as the drain left it when it last took (under the lock): a bound
    /// on it (it only falls until the drain takes again), so an offer that finds room
    /// by this bound need not read the drain's line.
    var inHandAtTake = 0
    /// The queue's `started` as last read (under the lock): with its `enqueued`, a bound
    /// on the deliveries from before the ring still waiting, which only falls (`started`
    /// only grows), so an offer need not read the queue's thread's line either.
    var startedSeen: UInt64 = 0
    /// The queue whose work this is.
    let queue: UnsafeMutablePointer<Queue>
    /// 0: unbounded.
    var capacity: Int
    var rule: Overflow
    var blockTimeoutMs: Int32
    var blockedHead: UnsafeMutablePointer<Blocked>? = nil
    var blockedTail: UnsafeMutablePointer<Blocked>? = nil
    /// Created queues: a drain item is posted and has not yet found the ring empty.
    var draining = false
    /// The main queue: items posted and not yet run (each runs one slot).
    var mainItems = 0
    /// The creator released the queue: BLOCK no longer waits.
    var released = false
    /// The blocks event copies for this queue are made in (nil: out of memory when the
    /// ring was made; copies are malloc'd then).
    let pool: UnsafeMutablePointer<PayloadPool>?
    /// Runs a delivery slot (its first argument; QueuedDelivery.swift), given when the
    /// ring was made.  The second: 0, or the `Overflow` of the doom the delivery took
    /// (then it ends without its handler).
    let runDelivery: @convention(c) (UnsafeMutableRawPointer, UInt32) -> Void
    /// Every ring, for qtbus_bus_destroy to find its dispatchers (under `ringsLock`).
    var nextRing: UnsafeMutablePointer<Ring>? = nil
    var prevRing: UnsafeMutablePointer<Ring>? = nil
    /// Atomic, on a line of its own: two counts in one word, so that a delivery that
    /// starts changes both in one step.  `inHand`: deliveries the drain took out
    /// of the ring in its current batch whose handlers have not started (still
    /// waiting); the drain adds them under the lock, and takes one away as each starts,
    /// without it.  `dooms`: deliveries the rules dropped that were out of their reach
    /// (see the top of the file): each delivery to start takes one while there are any,
    /// and ends without its handler.  Dispatchers add dooms under the lock, by
    /// compare-and-swap, while there is an undoomed delivery to take each.
    var padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    var hand: UInt64 = 0
    /// Atomic: the rule of the latest doom, which the DROP record of a delivery taking
    /// a doom names.
    var doomRule: UInt32 = Overflow.dropOldest.rawValue
    /// Atomic: 1 while dispatchers wait for room (BLOCK), so that the drain, which
    /// makes room without the lock, knows to take it and let them in.
    var hasBlocked: UInt64 = 0
}

/// Deliveries a drain takes out of the ring at once: the lock once per batch, not per
/// delivery.
private let batchSize = 32

/// `Ring.hand`'s halves.
private let doomUnit: UInt64 = 1 << 32
extension UInt64 {
    fileprivate var inHand: Int { Int(self & (doomUnit - 1)) }
    fileprivate var dooms: Int { Int(self >> 32) }
}

/// The rings of all queues, linked through `nextRing`; taken before a ring's own lock.
nonisolated(unsafe) private var ringsLock: UInt32 = 0
nonisolated(unsafe) private var rings: UnsafeMutablePointer<Ring>? = nil

extension UnsafeMutablePointer where Pointee == Queue {
    @inline(__always)
    var ring: UnsafeMutablePointer<Ring>? {
        qtshim_atomic_load_ptr(UnsafeMutablePointer<UnsafeMutableRawPointer?>(field(&pointee.ring)))?
            .assumingMemoryBound(to: Ring.self)
    }
}

// MARK: - Setting the limit

/// qtbus_queue_set_limit, arguments checked.  False when out of memory (nothing changed).
func setLimit(
    _ q: UnsafeMutablePointer<Queue>, capacity: Int, rule: Overflow, blockTimeoutMs: Int32,
    runDelivery: @convention(c) (UnsafeMutableRawPointer, UInt32) -> Void
) -> Bool {
    qtshim_lock(&ringsLock)
    defer { qtshim_unlock(&ringsLock) }
    guard let ring = q.ring else {
        // Unbounded and never bounded: the list stays.
        if rule == .grow && capacity == 0 { return true }
        let size = slotCount(for: capacity)
        guard let slots = tryAllocate(Slot.self, capacity: size), let ring = tryAllocate(Ring.self) else {
            return false
        }
        // A block per delivery the capacity allows, and one per delivery a drain holds
        // (up to a limit: beyond it copies are malloc'd).
        let pool = makePayloadPool(count: min(max(capacity, 16), 1024) + batchSize)
        ring.initialize(
            to: Ring(
                slots: slots, size: size, queue: q, capacity: capacity, rule: rule,
                blockTimeoutMs: blockTimeoutMs, pool: pool, runDelivery: runDelivery))
        ring.pointee.startedSeen = qtshim_atomic_load_seqcst_u64(q.field(&q.pointee.started))
        ring.pointee.nextRing = rings
        rings?.pointee.prevRing = ring
        rings = ring
        qtshim_atomic_store_ptr(UnsafeMutablePointer<UnsafeMutableRawPointer?>(q.field(&q.pointee.ring)), ring)
        return true
    }
    qtshim_lock(ring.field(&ring.pointee.lock))
    defer { qtshim_unlock(ring.field(&ring.pointee.lock)) }
    if capacity > ring.pointee.size && !ring.resize(slotCount(for: capacity)) { return false }
    ring.pointee.capacity = capacity
    ring.pointee.rule = rule
    ring.pointee.blockTimeoutMs = blockTimeoutMs
    ring.answerAllBlocked(Blocked.retry)
    return true
}

/// Frees the ring of a queue being freed (nothing is in it: no work is left to hold
/// the queue).
func freeRing(_ ring: UnsafeMutablePointer<Ring>) {
    qtshim_lock(&ringsLock)
    if let prev = ring.pointee.prevRing {
        prev.pointee.nextRing = ring.pointee.nextRing
    } else {
        rings = ring.pointee.nextRing
    }
    ring.pointee.nextRing?.pointee.prevRing = ring.pointee.prevRing
    qtshim_unlock(&ringsLock)
    free(ring.pointee.slots)
    // Copies in its blocks may outlive the queue (other queues' deliveries share them).
    ring.pointee.pool?.orphan()
    ring.deinitialize(count: 1)
    free(ring)
}

/// qtbus_queue_release on a bounded queue: its waiting dispatchers give up, and no
/// dispatcher waits from now on.
func releaseRing(_ ring: UnsafeMutablePointer<Ring>) {
    qtshim_lock(ring.field(&ring.pointee.lock))
    ring.pointee.released = true
    ring.answerAllBlocked(Blocked.queueReleased)
    qtshim_unlock(ring.field(&ring.pointee.lock))
}

/// qtbus_bus_destroy: the dispatchers of `bus` waiting on any queue give up.
func wakeBlocked(of bus: UnsafeMutableRawPointer) {
    qtshim_lock(&ringsLock)
    var cursor = rings
    while let ring = cursor {
        qtshim_lock(ring.field(&ring.pointee.lock))
        ring.removeBlocked(answering: Blocked.busDestroyed) { $0.pointee.bus == bus }
        qtshim_unlock(ring.field(&ring.pointee.lock))
        cursor = ring.pointee.nextRing
    }
    qtshim_unlock(&ringsLock)
}

// MARK: - Offering work

extension UnsafeMutablePointer where Pointee == Queue {
    /// Other work (a release, an execution) into the ring: never refused, never counted.
    func ringSubmit(_ ring: UnsafeMutablePointer<Ring>, _ node: UnsafeMutablePointer<WorkNode>) {
        qtshim_lock(ring.field(&ring.pointee.lock))
        ring.append(Slot(work: node))
        kick(ring)
        qtshim_unlock(ring.field(&ring.pointee.lock))
    }

    /// A delivery of `bus` into the ring, by the rule.  `mayWait`: a dispatch, which
    /// BLOCK may hold (a replay may not).
    func offer(_ ring: UnsafeMutablePointer<Ring>, _ slot: Slot, bus: UnsafeMutableRawPointer, mayWait: Bool) -> Offered
    {
        qtshim_lock(ring.field(&ring.pointee.lock))
        let offered = decide(ring, slot, bus: bus, mayWait: mayWait)
        // Done while the lock keeps the release queued behind a dropped delivery from
        // running (its subscription may be disposed).
        if let done = offered.dropped?.done { _ = qtshim_atomic_fetch_add_u64(done, 1) }
        qtshim_unlock(ring.field(&ring.pointee.lock))
        return offered
    }

    /// `offer` under the lock (which `wait` lets go while it sleeps).
    private func decide(
        _ ring: UnsafeMutablePointer<Ring>, _ slot: Slot, bus: UnsafeMutableRawPointer,
        mayWait: Bool
    ) -> Offered {
        while true {
            // Field by field: a copy of the whole Ring would read the lock word too.
            let rule = ring.pointee.rule
            if rule.replacesSameKey, let i = ring.sameKey(as: slot) {
                let old = ring.pointee.slots[i]
                ring.pointee.slots[i] = slot
                countDropped()
                return Offered(accepted: true, dropped: old, why: rule.name)
            }
            let capacity = ring.pointee.capacity
            if capacity == 0
                || (ring.pointee.blockedHead == nil
                    && (ring.waitingBound + ring.pointee.reserved < capacity
                        || ring.waiting() + ring.pointee.reserved < capacity))
            {
                accept(ring, slot)
                return Offered(accepted: true, dropped: nil, why: rule.name)
            }
            switch rule.whenFull(mayWait: mayWait && !mayNotWait(ring)) {
            case .accept:
                accept(ring, slot)
                return Offered(accepted: true, dropped: nil, why: rule.name)
            case .dropOffered:
                countDropped()
                return Offered(accepted: false, dropped: slot, why: rule.name)
            case .dropOldest:
                // The oldest waiting delivery: out of the ring's reach while any is
                // (they are older than the ring's), else the ring's first.
                if ring.doomOldest(rule) {
                    countDropped()
                    accept(ring, slot)
                    return Offered(accepted: true, dropped: nil, why: rule.name)
                }
                // Nil when every delivery waiting is doomed already: then the queue
                // holds more than the capacity only through the exceptions (the
                // dispatches that may not wait, a limit lowered below what waited),
                // and the new one joins them.
                let old = ring.removeOldestDelivery()
                if old != nil { countDropped() }
                accept(ring, slot)
                return Offered(accepted: true, dropped: old, why: rule.name)
            case .waitForRoom:
                let (released, timeoutMs) = (ring.pointee.released, ring.pointee.blockTimeoutMs)
                if released || timeoutMs == 0 {
                    countDropped()
                    return Offered(accepted: false, dropped: slot, why: released ? "qtbus_queue_release" : rule.name)
                }
                var me = Blocked(bus: bus)
                let answer = withUnsafeMutablePointer(to: &me) { wait(ring, $0, timeoutMs: timeoutMs) }
                switch answer {
                case Blocked.admitted:
                    ring.pointee.reserved -= 1
                    accept(ring, slot)
                    return Offered(accepted: true, dropped: nil, why: rule.name)
                case Blocked.retry:
                    continue
                default:
                    countDropped()
                    let why: StaticString =
                        answer == Blocked.busDestroyed
                        ? "qtbus_bus_destroy"
                        : answer == Blocked.queueReleased ? "qtbus_queue_release" : rule.name
                    return Offered(accepted: false, dropped: slot, why: why)
                }
            }
        }
    }

    /// Whether a dispatch on this thread must not wait for this queue: it is the
    /// queue's own (one of its handlers), or the main thread for the main queue.
    private func mayNotWait(_ ring: UnsafeMutablePointer<Ring>) -> Bool {
        qtshim_ring_current() == UnsafeMutableRawPointer(self) || (pointee.isMain && qtshim_is_main_thread())
    }

    /// Waits, the ring's lock held on entry and on return, for an answer or the
    /// timeout (then removes itself and answers `Blocked.waiting`).
    private func wait(_ ring: UnsafeMutablePointer<Ring>, _ me: UnsafeMutablePointer<Blocked>, timeoutMs: Int32)
        -> UInt32
    {
        if let tail = ring.pointee.blockedTail { tail.pointee.next = me } else { ring.pointee.blockedHead = me }
        ring.pointee.blockedTail = me
        // Published before room is looked at again: the drain makes room (`started`)
        // before it reads the flag, so one of the two sees the other (both sequentially
        // consistent).
        _ = qtshim_atomic_exchange_u64(ring.field(&ring.pointee.hasBlocked), 1)
        ring.admitBlocked()
        let deadline: UInt64? = timeoutMs < 0 ? nil : qtshim_now_ns() &+ UInt64(timeoutMs) * 1_000_000
        let word = me.field(&me.pointee.answer)
        while qtshim_atomic_load_u32(word) == Blocked.waiting {
            var remaining: Int64 = -1
            if let deadline {
                let now = qtshim_now_ns()
                if now >= deadline { break }
                remaining = Int64(deadline - now)
            }
            // The delivery from before the ring that the queue's thread was starting as
            // the ring was made (it looked for the ring before there was one) makes room
            // without waking anyone: while such deliveries wait, look every millisecond.
            let poll = ring.outside(exact: false) > 0
            if poll && (remaining < 0 || remaining > 1_000_000) { remaining = 1_000_000 }
            qtshim_unlock(ring.field(&ring.pointee.lock))
            qtshim_idle_wait(word, Blocked.waiting, remaining)
            qtshim_lock(ring.field(&ring.pointee.lock))
            if poll { ring.admitBlocked() }
        }
        let answer = qtshim_atomic_load_u32(word)
        if answer == Blocked.waiting {
            // Timed out: leave the line; whoever was behind may fit now.
            ring.removeBlocked(answering: nil) { $0 == me }
            ring.admitBlocked()
        }
        return answer
    }

    private func accept(_ ring: UnsafeMutablePointer<Ring>, _ slot: Slot) {
        ring.append(slot)
        ring.pointee.inRing += 1
        // The high-water mark, exact only when the bound passes it.
        if UInt64(ring.waitingBound) > qtshim_atomic_load_u64(field(&pointee.highWater)) {
            raiseHighWater(to: UInt64(ring.waiting()))
        }
        kick(ring)
    }

    private func countDropped() {
        qtshim_bump_u64(field(&pointee.dropped))
    }

    /// Makes sure something will run what was just appended.
    private func kick(_ ring: UnsafeMutablePointer<Ring>) {
        if pointee.isMain {
            guard ring.pointee.mainItems < ring.pointee.used else { return }
            ring.pointee.mainItems += 1
            qtshim_dq_async(pointee.dq, self) { raw in runMainItem(raw!.assumingMemoryBound(to: Queue.self)) }
            return
        }
        guard !ring.pointee.draining else { return }
        ring.pointee.draining = true
        // The item keeps the Queue alive: its creator may release it meanwhile.
        retain()
        qtshim_dq_async(pointee.dq, self) { raw in runDrain(raw!.assumingMemoryBound(to: Queue.self)) }
    }

    /// Takes the oldest slot out of the ring, under the lock; nil when it is empty.  A
    /// delivery taken still waits (`hand`) until `started`.
    fileprivate func take(_ ring: UnsafeMutablePointer<Ring>) -> Slot? {
        while ring.pointee.used > 0 {
            let slot = ring.pop()
            if slot.work != nil { return slot }
            guard slot.sub != nil else { continue }  // a dropped delivery's place
            ring.pointee.inRing -= 1
            // A load and a store: the other writers (dispatchers adding dooms, and this
            // thread itself) hold the lock or are this thread.
            let hand = qtshim_atomic_load_u64(ring.field(&ring.pointee.hand)) &+ 1
            qtshim_atomic_store_u64(ring.field(&ring.pointee.hand), hand)
            ring.pointee.inHandAtTake = hand.inHand
            return slot
        }
        return nil
    }

    /// A taken delivery's handler is about to start: it stops waiting, which may make
    /// room for the dispatchers waiting (BLOCK), or it takes a doom (the rule's raw
    /// value returned, else 0: it ends without its handler, and makes no room, having
    /// stopped counting when it was doomed).  The drain's own, without the lock.
    @inline(__always)
    fileprivate func started(_ ring: UnsafeMutablePointer<Ring>) -> UInt32 {
        let word = ring.field(&ring.pointee.hand)
        var hand = qtshim_atomic_load_u64(word)
        // Sequentially consistent: a full barrier between making room and looking for
        // waiters (see `wait`).
        while !qtshim_atomic_cas_seqcst_u64(word, hand, hand &- 1 &- (hand.dooms > 0 ? doomUnit : 0)) {
            hand = qtshim_atomic_load_u64(word)
        }
        if hand.dooms > 0 { return qtshim_atomic_load_u32(ring.field(&ring.pointee.doomRule)) }
        guard qtshim_atomic_load_seqcst_u64(ring.field(&ring.pointee.hasBlocked)) != 0 else { return 0 }
        qtshim_lock(ring.field(&ring.pointee.lock))
        ring.admitBlocked()
        qtshim_unlock(ring.field(&ring.pointee.lock))
        return 0
    }

    /// `countStarted` on a queue with a ring: a delivery posted before the ring existed
    /// starts, or takes a doom.  Under the lock, so that whoever counts sees both at once.
    @inline(never)
    func startedOutside(_ ring: UnsafeMutablePointer<Ring>) -> UInt32 {
        qtshim_lock(ring.field(&ring.pointee.lock))
        defer { qtshim_unlock(ring.field(&ring.pointee.lock)) }
        let word = ring.field(&ring.pointee.hand)
        var hand = qtshim_atomic_load_u64(word)
        // The drain may take one meanwhile (a delivery posted by a dispatch that looked
        // for the ring just before it existed can come after the ring's).
        while hand.dooms > 0 && !qtshim_atomic_cas_seqcst_u64(word, hand, hand &- doomUnit) {
            hand = qtshim_atomic_load_u64(word)
        }
        qtshim_bump_u64(field(&pointee.started))
        if hand.dooms > 0 { return qtshim_atomic_load_u32(ring.field(&ring.pointee.doomRule)) }
        ring.admitBlocked()
        return 0
    }

    /// qtbus_queue_stats_get on a queue with a ring: under its lock, so that `pending`
    /// is what waited at that instant.
    func ringStats(_ ring: UnsafeMutablePointer<Ring>) -> qtbus_queue_stats {
        qtshim_lock(ring.field(&ring.pointee.lock))
        defer { qtshim_unlock(ring.field(&ring.pointee.lock)) }
        let pending = UInt64(ring.waiting())
        // A dispatch that looked for the ring just before it was made posts outside it,
        // counting only the deliveries outside: the mark may have to catch up.
        raiseHighWater(to: pending)
        return qtbus_queue_stats(
            pending: pending, high_water: qtshim_atomic_load_u64(field(&pointee.highWater)),
            delivered: qtshim_atomic_load_u64(field(&pointee.delivered)),
            dropped: qtshim_atomic_load_u64(field(&pointee.dropped)))
    }
}

// MARK: - Running

/// A created queue's drain item: runs the ring, a batch at a time, until it finds it
/// empty.
private func runDrain(_ q: UnsafeMutablePointer<Queue>) {
    q.nameThread()
    let ring = q.ring!
    let locals = qtshim_thread()!
    let outer = locals.pointee.ring_running
    locals.pointee.ring_running = UnsafeMutableRawPointer(q)
    qtshim_tsan_acquire(ring)
    withUnsafeTemporaryAllocation(of: Slot.self, capacity: batchSize) { batch in
        let batch = batch.baseAddress!
        while true {
            qtshim_lock(ring.field(&ring.pointee.lock))
            var taken = 0
            while taken < batchSize, let slot = q.take(ring) {
                (batch + taken).initialize(to: slot)
                taken += 1
            }
            if taken == 0 {
                ring.pointee.draining = false
                ring.pointee.inHandAtTake = 0  // every handler taken has started
            }
            qtshim_unlock(ring.field(&ring.pointee.lock))
            if taken == 0 { break }
            for i in 0..<taken { run(q, ring, batch + i) }
            batch.deinitialize(count: taken)
        }
    }
    locals.pointee.ring_running = outer
    qtshim_tsan_release(ring)
    q.release()
}

/// A main-queue item: runs the oldest slot, if a drop has not left the ring empty.
private func runMainItem(_ q: UnsafeMutablePointer<Queue>) {
    let ring = q.ring!
    qtshim_lock(ring.field(&ring.pointee.lock))
    ring.pointee.mainItems -= 1
    let taken = q.take(ring)
    qtshim_unlock(ring.field(&ring.pointee.lock))
    guard var slot = taken else { return }
    let locals = qtshim_thread()!
    let outer = locals.pointee.ring_running
    locals.pointee.ring_running = UnsafeMutableRawPointer(q)
    withUnsafeMutablePointer(to: &slot) { run(q, ring, $0) }
    locals.pointee.ring_running = outer
}

private func run(
    _ q: UnsafeMutablePointer<Queue>, _ ring: UnsafeMutablePointer<Ring>, _ slot: UnsafeMutablePointer<Slot>
) {
    if let work = slot.pointee.work {
        qtshim_tsan_acquire(work)
        work.pointee.run(UnsafeMutableRawPointer(work))
    } else {
        ring.pointee.runDelivery(UnsafeMutableRawPointer(slot), q.started(ring))
    }
}

// MARK: - The ring itself (under its lock)

/// The slots for `capacity` deliveries: a power of two (an index wraps with a mask, not
/// a division), at least 16.
private func slotCount(for capacity: Int) -> Int {
    var size = 16
    while size < capacity { size <<= 1 }
    return size
}

extension UnsafeMutablePointer where Pointee == Ring {
    /// The index of the slot `i` places after the oldest.
    @inline(__always)
    fileprivate func at(_ i: Int) -> Int { (pointee.head &+ i) & (pointee.size &- 1) }

    fileprivate func append(_ slot: Slot) {
        // Beyond the capacity, or GROW: waits for memory, as the unbounded queue does.
        if pointee.used == pointee.size { _ = resize(pointee.size * 2, waiting: true) }
        pointee.slots[at(pointee.used)] = slot
        pointee.used += 1
    }

    fileprivate func pop() -> Slot {
        let slot = pointee.slots[pointee.head]
        pointee.head = at(1)
        pointee.used -= 1
        return slot
    }

    /// Moves the slots to an array of `size` (>= used), oldest first.
    fileprivate func resize(_ size: Int, waiting: Bool = false) -> Bool {
        func attempt() -> UnsafeMutablePointer<Slot>? { tryAllocate(Slot.self, capacity: size) }
        guard let slots = attempt() ?? (waiting ? waitForMemory(attempt) : nil) else { return false }
        for i in 0..<pointee.used { slots[i] = pointee.slots[at(i)] }
        free(pointee.slots)
        pointee.slots = slots
        pointee.size = size
        pointee.head = 0
        return true
    }

    /// The index of the waiting delivery LATEST replaces: same subscription, type and
    /// subtype.  Newest first: with LATEST there is at most one per key.
    fileprivate func sameKey(as slot: Slot) -> Int? {
        var i = pointee.used
        while i > 0 {
            i -= 1
            let index = at(i)
            let other = pointee.slots[index]
            guard other.sub == slot.sub, let a = other.payload, let b = slot.payload else { continue }
            if a == b || (strcmp(a.type, b.type) == 0 && sameSubtype(a.subtype, b.subtype)) { return index }
        }
        return nil
    }

    /// Takes the oldest delivery out (its place stays, empty, if it is not the first).
    fileprivate func removeOldestDelivery() -> Slot? {
        for i in 0..<pointee.used {
            let index = at(i)
            let slot = pointee.slots[index]
            guard slot.sub != nil else { continue }
            if i == 0 { _ = pop() } else { pointee.slots[index] = Slot() }
            pointee.inRing -= 1
            return slot
        }
        return nil
    }

    /// Deliveries posted before the ring existed (or by a dispatch that looked for it
    /// just before) that have not started, doomed ones included.  `exact`: reads the
    /// queue's thread's count (and keeps it); else a bound, from the count last read.
    @inline(__always)
    fileprivate func outside(exact: Bool) -> Int {
        let q = pointee.queue
        // None left (the usual case once the ring has run a while): nothing to read.
        if qtshim_atomic_load_u64(q.field(&q.pointee.enqueued)) == pointee.startedSeen { return 0 }
        if exact { pointee.startedSeen = qtshim_atomic_load_seqcst_u64(q.field(&q.pointee.started)) }
        // Read after `started`: never behind it.
        let enqueued = qtshim_atomic_load_u64(q.field(&q.pointee.enqueued))
        return enqueued > pointee.startedSeen ? Int(enqueued &- pointee.startedSeen) : 0
    }

    /// Deliveries waiting, less those doomed: outside the ring, in it, or taken by the
    /// drain and not started.  Reads the drain's line and the queue thread's.
    @inline(__always)
    fileprivate func waiting() -> Int {
        let outside = outside(exact: true)
        let hand = qtshim_atomic_load_seqcst_u64(field(&pointee.hand))
        return max(0, outside + pointee.inRing + hand.inHand - hand.dooms)
    }

    /// At least `waiting()`, without reading the drain's line or the queue thread's.
    @inline(__always)
    fileprivate var waitingBound: Int { outside(exact: false) + pointee.inRing + pointee.inHandAtTake }

    /// DROP_OLDEST and LATEST when the oldest delivery waiting is out of the ring's
    /// reach: dooms the next delivery to start.  False when every such delivery is
    /// doomed already (or there is none).
    fileprivate func doomOldest(_ rule: Overflow) -> Bool {
        let outside = outside(exact: true)
        let word = field(&pointee.hand)
        var hand = qtshim_atomic_load_seqcst_u64(word)
        // Named first: a delivery may take the doom as soon as it is counted.
        qtshim_atomic_store_u32(field(&pointee.doomRule), rule.rawValue)
        while outside + hand.inHand > hand.dooms {
            if qtshim_atomic_cas_seqcst_u64(word, hand, hand &+ doomUnit) { return true }
            hand = qtshim_atomic_load_seqcst_u64(word)  // the drain started one
        }
        return false
    }

    /// Gives room to the dispatchers waiting, oldest first, while there is room.
    fileprivate func admitBlocked() {
        while let b = pointee.blockedHead, pointee.capacity == 0 || waiting() + pointee.reserved < pointee.capacity {
            pointee.blockedHead = b.pointee.next
            if pointee.blockedHead == nil { pointee.blockedTail = nil }
            pointee.reserved += 1
            answer(b, Blocked.admitted)
        }
        noteBlocked()
    }

    fileprivate func answerAllBlocked(_ value: UInt32) {
        removeBlocked(answering: value) { _ in true }
    }

    /// Takes the waiters `leaving` picks out of the line, the others keeping their
    /// order, and answers each with `value` (nil: the one leaving is the caller).
    fileprivate func removeBlocked(answering value: UInt32?, where leaving: (UnsafeMutablePointer<Blocked>) -> Bool) {
        var link = field(&pointee.blockedHead)
        var last: UnsafeMutablePointer<Blocked>? = nil
        while let b = link.pointee {
            if leaving(b) {
                link.pointee = b.pointee.next
                if let value { answer(b, value) }
            } else {
                last = b
                link = b.field(&b.pointee.next)
            }
        }
        pointee.blockedTail = last
        noteBlocked()
    }

    /// Keeps `hasBlocked` in step with the line of waiters (under the lock).
    fileprivate func noteBlocked() {
        let value: UInt64 = pointee.blockedHead == nil ? 0 : 1
        if qtshim_atomic_load_u64(field(&pointee.hasBlocked)) != value {
            qtshim_atomic_store_u64(field(&pointee.hasBlocked), value)
        }
    }
}

/// Under the ring's lock, so the waiter (which retakes it before leaving) is still
/// there to be woken.
private func answer(_ b: UnsafeMutablePointer<Blocked>, _ value: UInt32) {
    qtshim_atomic_store_u32(b.field(&b.pointee.answer), value)
    qtshim_idle_wake(b.field(&b.pointee.answer))
}

private func sameSubtype(_ a: UnsafeMutablePointer<CChar>?, _ b: UnsafeMutablePointer<CChar>?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    return strcmp(a, b) == 0
}
