// SPDX-License-Identifier: MIT
// Queued deliveries: a delivery of a dispatch to a subscription with a queue, run on
// that queue later, with the payload the dispatch shares among them.
import CQtbusShims
import Glibc

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

/// Posts one delivery of `payload` (whose reference it takes) to `sub`'s queue.
///
/// The payload was allocated for this dispatch anyway, so the first delivery posted
/// with it rides inside it (claimed by CAS: a kept sticky payload is shared between
/// threads); only further ones allocate a Delivery.  One queued subscriber then costs
/// one allocation a dispatch besides libdispatch's own continuation.  `tracing`: the
/// bus, when its hook takes DELIVER records (such a delivery does not ride).
func enqueueDelivery(_ sub: UnsafeMutablePointer<Subscription>, _ payload: UnsafeMutablePointer<Payload>, once: Bool,
                     tracing: UnsafeMutablePointer<Bus>?) {
    let extra = sub.pointee.extra!
    _ = qtshim_atomic_fetch_add_u64(extra.field(\.posted), 1)
    let queue = extra.pointee.queue!
    let bus = extra.pointee.bus!
    // Read now: once posted, the delivery may run and its subscription let the queue go.
    let isMain = queue.pointee.isMain
    beginQueuedWork(bus, main: isMain)
    queue.countEnqueued()
    if tracing == nil && qtshim_atomic_cas_u32(payload.field(\.carrying), 0, 1) {
        payload.field(\.carriedOnce).pointee = once
        let carried = payload.field(\.carried)
        carried.initialize(to: CarriedDelivery(node: WorkNode(run: { raw in
            // The payload outlives this: `run` drops the delivery's reference last.
            let payload = (raw! - carriedOffset).assumingMemoryBound(to: Payload.self)
            run(Delivery(node: WorkNode(run: { _ in }), sub: payload.pointee.carried.sub!, payload: payload,
                         once: payload.pointee.carriedOnce))
        }), sub: sub))
        submit(queue, UnsafeMutableRawPointer(carried).assumingMemoryBound(to: WorkNode.self))
        if isMain { mainWorkPosted(bus) }
        return
    }
    // The dispatch is under way (handlers may have run): wait rather than fail.
    let d = allocateWaiting(Delivery.self)
    d.initialize(to: Delivery(node: WorkNode(run: { raw in
        let d = raw!.assumingMemoryBound(to: Delivery.self)
        let delivery = d.move()
        free(d)
        run(delivery)
    }), sub: sub, payload: payload, once: once, tracing: tracing))
    submit(queue, UnsafeMutableRawPointer(d).assumingMemoryBound(to: WorkNode.self))
    if isMain { mainWorkPosted(bus) }
}

private let carriedOffset = MemoryLayout<Payload>.offset(of: \Payload.carried)!

/// Runs a queued delivery on its queue and drops its references.
private func run(_ d: Delivery) {
    let extra = d.sub.pointee.extra!
    let (queue, bus) = (extra.pointee.queue!, extra.pointee.bus!)
    // Lifetime rule 2: a delivery queued before its subscription was disposed is dropped.
    let handled = d.once || SubState.isLive(d.sub)
    queue.countStarted(handled: handled)
    if handled {
        // Saved: a main-queue handler may drain the main queue again.
        let outer = qtshim_queued_current()
        qtshim_queued_set(1)
        var view = EventView(payload: d.payload, queued: true)
        withUnsafeMutablePointer(to: &view) { view in
            if d.tracing != nil || qtshim_probe_deliver_enabled() {
                deliverInstrumented(d.sub, view, queued: true, tracing: d.tracing)
            } else {
                d.sub.pointee.handler(OpaquePointer(view), d.sub.pointee.userdata)
            }
        }
        qtshim_queued_set(outer)
        qtshim_tsan_handlers_returned()
        countIfMain(queue.pointee.isMain)
    }
    d.payload.release()
    // Once `done` catches up with `posted`, the subscription may be released and its
    // memory reused (see `afterGracePeriod`).
    let done = extra.field(\.done)
    qtshim_atomic_store_u64(done, qtshim_atomic_load_u64(done) + 1)
    // Last: the bus may be freed now; a qtbus_bus_wait_idle caller then finds the
    // delivery over, its object released.
    endQueuedWork(bus)
}
