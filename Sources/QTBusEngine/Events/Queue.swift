// SPDX-License-Identifier: MIT
// Engine queues (qtbus_queue) and the work they run.
//
// Queues are libdispatch queues driven through its C ABI (dispatch_async_f: one
// continuation, no Swift closure context).  The main queue is libdispatch's own
// (MainQueue.swift).
//
// Batches: libdispatch's own cost per posted item (dispatch_async_f, the worker's
// wake-up and its continuation) is most of what a queued delivery costs, so queues made
// by qtbus_queue_create do not post one item per delivery.  Work for such a queue goes
// onto its lock-free list (a Treiber stack of WorkNodes); the push that finds the list
// empty posts one libdispatch item, which takes the whole list at once, restores its
// order and runs it.  FIFO holds: every node is run by an item posted no later than the
// node was pushed, and an item takes everything pushed before it runs.  Only qtbus posts
// to these queues (the C API exposes no other way), so running a batch inside one item
// reorders nothing anyone else posted.  The main queue is not batched: C and Swift
// main-queue work must stay one FIFO with DispatchQueue.main's own blocks.
//
// A queue bounded by qtbus_queue_set_limit keeps its work in a ring instead
// (BoundedQueue.swift), from then on.
import CQtbusShims
import CQtbusLibc

struct Queue {
    let dq: qtshim_dispatch_queue_t
    /// The creator's reference plus one per subscription using the queue, plus one
    /// while a batch item is posted.
    var refs: UInt64 = 1
    let isMain: Bool
    /// Whether work goes through `batch` (created queues) or straight to libdispatch.
    let batched: Bool
    /// Atomic: the newest WorkNode not yet taken by a batch item (a stack).
    var batch: UnsafeMutableRawPointer? = nil
    /// qtbus_queue_stats_get's counts.  Atomic: deliveries posted outside a ring (to
    /// the list or to libdispatch; dispatching threads add), and the most ever waiting
    /// at once (raised by compare-and-swap: it never falls).
    var enqueued: UInt64 = 0
    var highWater: UInt64 = 0
    /// Written by the queue's thread only (it is serial), apart from the dispatching
    /// threads' line: deliveries posted outside a ring that left the wait (their
    /// handler starts, they were dropped by lifetime rule 2, or by a doom: see
    /// `Ring.hand`), and handler calls made.  A ring counts its own deliveries.
    var padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0)
    var started: UInt64 = 0
    var delivered: UInt64 = 0
    /// Deliveries the overflow rule dropped; written under the ring's lock.
    var dropped: UInt64 = 0
    /// Atomic: the Ring, once qtbus_queue_set_limit bounded the queue (BoundedQueue.swift).
    var ring: UnsafeMutableRawPointer? = nil
    /// A created queue's work names its thread (qtbus.h, qtbus_queue_create): the label
    /// cut to 15 bytes, NUL-padded, and its hash (0: the main queue, never named).
    /// Written before the queue is published, read by its threads.
    var threadName: (UInt64, UInt64) = (0, 0)
    var threadNameHash: UInt64 = 0
}

extension UnsafeMutablePointer where Pointee == Queue {
    /// A delivery is posted: counted as waiting, and in the high-water mark.
    @inline(__always)
    func countEnqueued() {
        let enqueued = qtshim_atomic_fetch_add_u64(field(&pointee.enqueued), 1) &+ 1
        // Later deliveries of other threads may have started meanwhile: then none of
        // this count is waiting.
        let started = qtshim_atomic_load_u64(field(&pointee.started))
        guard enqueued > started else { return }
        let waiting = enqueued &- started
        if waiting > qtshim_atomic_load_u64(field(&pointee.highWater)) { raiseHighWater(waiting) }
    }

    @inline(never)
    private func raiseHighWater(_ waiting: UInt64) {
        var seen = qtshim_atomic_load_u64(field(&pointee.highWater))
        while waiting > seen && !qtshim_atomic_cas_u64(field(&pointee.highWater), seen, waiting) {
            seen = qtshim_atomic_load_u64(field(&pointee.highWater))
        }
    }

    /// On the queue's thread: a delivery posted outside a ring leaves the wait.  0, or
    /// the raw `Overflow` of the doom it takes: then it is dropped instead of run (a
    /// bounded queue's rule chose the oldest waiting delivery, BoundedQueue.swift).
    @inline(__always)
    func countStarted() -> UInt32 {
        if let ring { return startedOutside(ring) }
        qtshim_bump_u64(field(&pointee.started))
        return 0
    }

    /// On the queue's thread: a delivery calls its handler.
    @inline(__always)
    func countDelivered() {
        qtshim_bump_u64(field(&pointee.delivered))
    }

    /// The most ever waiting is at least `waiting`.
    func raiseHighWater(to waiting: UInt64) {
        if waiting > qtshim_atomic_load_u64(field(&pointee.highWater)) { raiseHighWater(waiting) }
    }

    /// qtbus_queue_stats_get.
    func stats() -> qtbus_queue_stats {
        if let ring { return ringStats(ring) }
        let dropped = qtshim_atomic_load_u64(field(&pointee.dropped))
        let delivered = qtshim_atomic_load_u64(field(&pointee.delivered))
        let started = qtshim_atomic_load_u64(field(&pointee.started))
        let enqueued = qtshim_atomic_load_u64(field(&pointee.enqueued))
        // Read in this order, a count is never behind the ones read before it: pending
        // is not negative (it may still count one that started meanwhile, as the header
        // says), and the high-water mark reported is never below it.
        let pending = enqueued > started ? enqueued &- started : 0
        return qtbus_queue_stats(
            pending: pending,
            high_water: max(pending, qtshim_atomic_load_u64(field(&pointee.highWater))),
            delivered: delivered, dropped: dropped)
    }
}

/// The head of every piece of work a queue runs: a delivery, a release, an execution.
struct WorkNode {
    var next: UnsafeMutablePointer<WorkNode>? = nil
    let run: @convention(c) (UnsafeMutableRawPointer?) -> Void
}

/// nil when out of memory.
func makeQueue(label: UnsafePointer<CChar>?) -> UnsafeMutablePointer<Queue>? {
    qtshim_engine_used()
    guard let q = tryAllocate(Queue.self) else { return nil }
    // libdispatch waits for memory itself: it never returns NULL.
    // A static default label: a Swift String may be copied into an allocation (Bus.swift).
    let dq = qtshim_dq_create_serial(label ?? cText("qtbus.queue"))!
    q.initialize(to: Queue(dq: dq, isMain: false, batched: true))
    let name = UnsafeMutableRawPointer(q.field(&q.pointee.threadName)).assumingMemoryBound(to: CChar.self)
    q.pointee.threadNameHash = qtshim_thread_name_make(label, name)
    return q
}

/// Runs `node` on `q`: `node.run(node)` later, after everything submitted to `q` before.
/// The node must stay valid until it runs; its `run` frees it if it needs freeing.
func submit(_ q: UnsafeMutablePointer<Queue>, _ node: UnsafeMutablePointer<WorkNode>) {
    if let ring = q.ring {
        qtshim_tsan_release(node)
        return q.ringSubmit(ring, node)
    }
    submitUnbounded(q, node)
}

/// `submit` to a queue known to have no ring (a delivery's caller looked already).
@inline(__always)
func submitUnbounded(_ q: UnsafeMutablePointer<Queue>, _ node: UnsafeMutablePointer<WorkNode>) {
    qtshim_tsan_release(node)
    guard q.pointee.batched else {
        qtshim_dq_async(q.pointee.dq, node) { raw in
            qtshim_tsan_acquire(raw)
            let node = raw!.assumingMemoryBound(to: WorkNode.self)
            node.pointee.run(raw)
        }
        return
    }
    let head = UnsafeMutablePointer<UnsafeMutableRawPointer?>(q.field(&q.pointee.batch))
    var old = qtshim_atomic_load_ptr(head)
    repeat {
        node.pointee.next = old?.assumingMemoryBound(to: WorkNode.self)
    } while !qtshim_atomic_cas_ptr(head, &old, node)
    guard old == nil else { return }  // an item posted earlier will take this node
    // The item keeps the Queue alive: its creator may release it meanwhile.
    q.retain()
    qtshim_dq_async(q.pointee.dq, q) { raw in runBatch(raw!.assumingMemoryBound(to: Queue.self)) }
}

/// A batch item: takes the whole list, reverses it into submission order, runs it.
private func runBatch(_ q: UnsafeMutablePointer<Queue>) {
    q.nameThread()
    // A serial queue's items may run on different threads, one after the other.
    qtshim_tsan_acquire(q.field(&q.pointee.batch))
    let head = UnsafeMutablePointer<UnsafeMutableRawPointer?>(q.field(&q.pointee.batch))
    var cursor = qtshim_atomic_exchange_ptr(head, nil)?.assumingMemoryBound(to: WorkNode.self)
    var ordered: UnsafeMutablePointer<WorkNode>? = nil
    while let node = cursor {
        cursor = node.pointee.next
        node.pointee.next = ordered
        ordered = node
    }
    while let node = ordered {
        ordered = node.pointee.next  // read first: run may free the node
        qtshim_tsan_acquire(node)
        node.pointee.run(UnsafeMutableRawPointer(node))
    }
    qtshim_tsan_release(q.field(&q.pointee.batch))
    q.release()
}

/// Work that is not a delivery (a release, an execution): `work(context)` on `q`, in
/// FIFO order with its deliveries.  Allocates a node; these are rare next to deliveries.
func submit(
    _ q: UnsafeMutablePointer<Queue>, context: UnsafeMutableRawPointer?,
    _ work: @convention(c) (UnsafeMutableRawPointer?) -> Void
) {
    struct Item {
        var node: WorkNode
        let context: UnsafeMutableRawPointer?
        let work: @convention(c) (UnsafeMutableRawPointer?) -> Void
    }
    // A release or an accepted execution: it must run, so it waits for memory.
    let item = allocateWaiting(Item.self)
    item.initialize(
        to: Item(
            node: WorkNode(run: { raw in
                let item = raw!.assumingMemoryBound(to: Item.self)
                let (context, work) = (item.pointee.context, item.pointee.work)
                item.deinitialize(count: 1)
                free(item)
                work(context)
            }), context: context, work: work))
    submit(q, UnsafeMutableRawPointer(item).assumingMemoryBound(to: WorkNode.self))
}

extension UnsafeMutablePointer where Pointee == Queue {
    /// At the start of a created queue's libdispatch item: the pool thread running it
    /// takes the queue's name, unless it has it already (one comparison; a prctl only
    /// when the thread comes from work of another name).  Per item, not per delivery:
    /// an item runs a batch.  The thread keeps the name after the item (qtbus.h says
    /// why); the main queue's items never come here.
    @inline(__always)
    func nameThread() {
        let name = UnsafeRawPointer(field(&pointee.threadName)).assumingMemoryBound(to: CChar.self)
        qtshim_thread_name_set(pointee.threadNameHash, name)
    }

    func retain() {
        if !pointee.isMain { _ = qtshim_atomic_fetch_add_u64(field(&pointee.refs), 1) }
    }

    /// Work already posted keeps the libdispatch queue alive by itself.
    func release() {
        guard !pointee.isMain else { return }
        guard droppedLastReference(self, field(&pointee.refs)) else { return }
        if let ring { freeRing(ring) }
        qtshim_dq_release(pointee.dq)
        deinitialize(count: 1)
        free(self)
    }
}
