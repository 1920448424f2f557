// SPDX-License-Identifier: MIT
// Queued deliveries: a delivery of a dispatch to a subscription with a queue, run on
// that queue later, with the payload the dispatch shares among them.
import CQtbusShims
import CQtbusLibc

struct Delivery {
    /// First: a Delivery is the WorkNode its queue runs.
    var node: WorkNode
    let sub: UnsafeMutablePointer<Subscription>
    let payload: UnsafeMutablePointer<Payload>
    /// The delivery that claimed a ONCE subscription runs although it is no longer live.
    let once: Bool
    /// The bus whose hook takes a DELIVER record of this delivery.
    var tracing: UnsafeMutablePointer<Bus>? = nil
}

/// Posts one delivery of `payload` (whose reference it takes) to `sub`'s queue; false
/// when a bounded queue dropped it (then its reference was dropped too).  `mayWait`:
/// a dispatch, which a BLOCK queue may hold until there is room (a replay may not).
///
/// The payload was allocated for this dispatch anyway, so the first delivery posted
/// with it rides inside it (claimed by CAS: a kept sticky payload is shared between
/// threads); only further ones allocate a Delivery.  One queued subscriber then costs
/// one allocation a dispatch besides libdispatch's own continuation.  `tracing`: the
/// bus, when its hook takes DELIVER records (such a delivery does not ride).
@discardableResult
func enqueueDelivery(
    _ sub: UnsafeMutablePointer<Subscription>, _ payload: UnsafeMutablePointer<Payload>, once: Bool,
    tracing: UnsafeMutablePointer<Bus>?, mayWait: Bool = false
) -> Bool {
    let extra = sub.pointee.extra!
    _ = qtshim_atomic_fetch_add_u64(extra.field(&extra.pointee.posted), 1)
    let queue = extra.pointee.queue!
    let bus = extra.pointee.bus!
    // Read now: once posted, the delivery may run and its subscription let the queue go.
    let isMain = queue.pointee.isMain
    beginQueuedWork(bus, main: isMain)
    if let ring = queue.ring {
        return enqueueBounded(queue, ring, sub, payload, once: once, tracing: tracing, mayWait: mayWait, bus)
    }
    queue.countEnqueued()
    if tracing == nil && qtshim_atomic_cas_u32(payload.field(&payload.pointee.carrying), 0, 1) {
        payload.field(&payload.pointee.carriedOnce).pointee = once
        let carried = payload.field(&payload.pointee.carried)
        carried.initialize(
            to: CarriedDelivery(
                node: WorkNode(run: { raw in
                    // The payload outlives this: `run` drops the delivery's reference last.
                    let payload = (raw! - carriedOffset).assumingMemoryBound(to: Payload.self)
                    run(
                        Delivery(
                            node: WorkNode(run: { _ in }), sub: payload.pointee.carried.sub!, payload: payload,
                            once: payload.pointee.carriedOnce))
                }), sub: sub))
        submitUnbounded(queue, UnsafeMutableRawPointer(carried).assumingMemoryBound(to: WorkNode.self))
        if isMain { mainWorkPosted(bus) }
        return true
    }
    // The dispatch is under way (handlers may have run): wait rather than fail.
    let d = allocateWaiting(Delivery.self)
    d.initialize(
        to: Delivery(
            node: WorkNode(run: { raw in
                let d = raw!.assumingMemoryBound(to: Delivery.self)
                let delivery = d.move()
                free(d)
                run(delivery)
            }), sub: sub, payload: payload, once: once, tracing: tracing))
    submitUnbounded(queue, UnsafeMutableRawPointer(d).assumingMemoryBound(to: WorkNode.self))
    if isMain { mainWorkPosted(bus) }
    return true
}

/// `enqueueDelivery` on a bounded queue: the ring decides (Events/BoundedQueue.swift);
/// what it dropped is finished here, outside its lock.
@inline(never)
private func enqueueBounded(
    _ queue: UnsafeMutablePointer<Queue>, _ ring: UnsafeMutablePointer<Ring>,
    _ sub: UnsafeMutablePointer<Subscription>, _ payload: UnsafeMutablePointer<Payload>,
    once: Bool, tracing: UnsafeMutablePointer<Bus>?, mayWait: Bool,
    _ bus: UnsafeMutablePointer<Bus>
) -> Bool {
    let extra = sub.pointee.extra!
    let slot = Slot(
        sub: sub, payload: payload, tracing: tracing.map { UnsafeMutableRawPointer($0) },
        bus: UnsafeMutableRawPointer(bus), token: SubscriptionPool.token(sub),
        done: extra.field(&extra.pointee.done), once: once)
    let offered = queue.offer(ring, slot, bus: UnsafeMutableRawPointer(bus), mayWait: mayWait)
    if queue.pointee.isMain { mainWorkPosted(bus) }
    if let dropped = offered.dropped { finishDropped(dropped, offered.why) }
    return offered.accepted
}

/// A delivery a bounded queue dropped: reported (a DROP record, the `drop` probe), its
/// payload reference dropped (which may release the event's object and complete a
/// request), and its work over, as if it had run (the ring counted it done under its
/// lock).  Its subscription is not touched: a dispatcher of another subscription may
/// drop it after it was disposed, when the release waiting behind it in the ring may
/// run as soon as the lock is let go; the slot carries what the record needs, and the
/// bus stays pinned by the delivery until `endQueuedWork`.
private func finishDropped(_ slot: Slot, _ why: StaticString) {
    let payload = slot.payload!
    let bus = slot.bus!.assumingMemoryBound(to: Bus.self)
    reportDrop(bus, token: slot.token, payload.type, payload.subtype, why)
    payload.release()
    endQueuedWork(bus)
}

/// Ring.runDelivery: a delivery taken from a bounded queue's ring (which counted it as
/// started, and says whether it took a doom).
let runRingDelivery: @convention(c) (UnsafeMutableRawPointer, UInt32) -> Void = { raw, doom in
    let slot = raw.assumingMemoryBound(to: Slot.self)
    run(
        Delivery(
            node: WorkNode(run: { _ in }), sub: slot.pointee.sub!,
            payload: slot.pointee.payload!, once: slot.pointee.once,
            tracing: slot.pointee.tracing?.assumingMemoryBound(to: Bus.self)), counted: true, doom: doom)
}

/// A delivery that took a doom: its DROP record and probe, on the queue's thread.
@inline(never)
private func reportDoomed(
    _ sub: UnsafeMutablePointer<Subscription>, _ payload: UnsafeMutablePointer<Payload>,
    _ bus: UnsafeMutablePointer<Bus>, _ doom: UInt32
) {
    let rule = Overflow(rawValue: doom) ?? .dropOldest
    reportDrop(bus, token: SubscriptionPool.token(sub), payload.type, payload.subtype, rule.name)
}

private let carriedOffset = MemoryLayout<Payload>.offset(of: \Payload.carried)!

/// Runs a queued delivery on its queue and drops its references.  `counted`: the
/// queue counted it as started already (a bounded queue's ring), and `doom` is 0 or
/// the raw `Overflow` of the doom it took there.
@inline(__always)
private func run(_ d: Delivery, counted: Bool = false, doom: UInt32 = 0) {
    let extra = d.sub.pointee.extra!
    let (queue, bus) = (extra.pointee.queue!, extra.pointee.bus!)
    // A bounded queue's rule dropped the oldest waiting delivery, and this is it (it
    // was counted as dropped then; Events/BoundedQueue.swift).
    let doom = counted ? doom : queue.countStarted()
    // Lifetime rule 2: a delivery queued before its subscription was disposed is dropped.
    let handled = doom == 0 && (d.once || SubState.isLive(d.sub))
    if handled { queue.countDelivered() }
    if doom != 0 { reportDoomed(d.sub, d.payload, bus, doom) }
    if handled {
        // Saved: a main-queue handler may drain the main queue again.
        let locals = qtshim_thread()!
        let outer = locals.pointee.queued_running
        locals.pointee.queued_running = 1
        var view = EventView(payload: d.payload, queued: true)
        handlingEvent(view.headers) {
            withUnsafeMutablePointer(to: &view) { view in
                if d.tracing != nil || qtshim_probe_deliver_enabled() {
                    deliverInstrumented(d.sub, view, queued: true, tracing: d.tracing)
                } else {
                    d.sub.pointee.handler(OpaquePointer(view), d.sub.pointee.userdata)
                }
            }
        }
        locals.pointee.queued_running = outer
        qtshim_tsan_handlers_returned()
        countIfMain(queue.pointee.isMain)
    }
    d.payload.release()
    // Once `done` catches up with `posted`, the subscription may be released and its
    // memory reused (see `afterGracePeriod`).
    let done = extra.field(&extra.pointee.done)
    if counted {
        // A bounded queue's dispatchers count the deliveries they drop here too.
        _ = qtshim_atomic_fetch_add_u64(done, 1)
    } else {
        // (A drop racing this store, on a queue bounded meanwhile, can only leave `done`
        // behind: the release then goes through the queue, which is always safe.)
        qtshim_bump_u64(done)
    }
    // Last: the bus may be freed now; a qtbus_bus_wait_idle caller then finds the
    // delivery over, its object released.
    endQueuedWork(bus)
}
