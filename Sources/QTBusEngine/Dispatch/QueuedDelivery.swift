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
    /// Pinned: the bus whose hook takes a DELIVER record of this delivery.
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
    if let tracing { pinBus(tracing) }
    submit(queue, UnsafeMutableRawPointer(d).assumingMemoryBound(to: WorkNode.self))
}

private let carriedOffset = MemoryLayout<Payload>.offset(of: \Payload.carried)!

/// Runs a queued delivery on its queue and drops its references.
private func run(_ d: Delivery) {
    // Lifetime rule 2: a delivery queued before its subscription was disposed is dropped.
    if d.once || SubState.isLive(d.sub) {
        var view = EventView(payload: d.payload, queued: true)
        withUnsafeMutablePointer(to: &view) { view in
            if d.tracing != nil || qtshim_probe_deliver_enabled() {
                deliverInstrumented(d.sub, view, queued: true, tracing: d.tracing)
            } else {
                d.sub.pointee.handler(OpaquePointer(view), d.sub.pointee.userdata)
            }
        }
        qtshim_tsan_handlers_returned()
        countIfMain(Subscription.queue(d.sub)!.pointee.isMain)
    }
    if let bus = d.tracing { unpinBus(bus) }
    d.payload.release()
    // Last: once `done` catches up with `posted`, the subscription may be released and
    // its memory reused (see `afterGracePeriod`).
    let done = d.sub.pointee.extra!.field(\.done)
    qtshim_atomic_store_u64(done, qtshim_atomic_load_u64(done) + 1)
}
