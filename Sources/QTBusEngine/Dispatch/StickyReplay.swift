// SPDX-License-Identifier: MIT
// Sticky events and REPLAY subscriptions.
//
// The promise: replay then live has no gap, no duplicate, and keeps order.
//
// No gap, no duplicate: a sticky dispatch stores its event and reads the type's
// subscription sequence in one critical section of the registry lock, and a REPLAY
// subscribe collects the kept events and links its nodes in one critical section.
// So either the subscription existed when the event was kept (its sequence is <= the
// dispatch's start: live delivery reaches it, and the event was not collected) or it
// did not (the dispatch skips it, and the event was collected for replay).
//
// Order: live dispatches on other threads can reach the new subscription before the
// subscribing thread has delivered the replay.  So the collected events are the first
// items of the subscription's backlog, whose gate is shut (`gateOpen == 0`) before its
// nodes are published: dispatchers append to the backlog instead of delivering, and the
// subscribing thread, after the unlock, delivers the backlog in order and opens the gate
// only when it is empty.  A dispatch that thread makes from inside a replayed handler is
// not parked but delivered at once (`Backlog.parks`): it is nested in the replay, and
// nesting is depth-first everywhere.
import CQtbusShims
import CQtbusLibc

/// On the subscribing thread, after the unlock that linked a REPLAY subscription: the
/// backlog (the replay, then live events parked meanwhile) until it is empty, then open.
let deliverReplay: Finalizer = { raw in
    let sub = raw!.assumingMemoryBound(to: Subscription.self)
    let backlog = sub.pointee.extra!.pointee.backlog!
    qtshim_atomic_store_ptr(backlog.field(&backlog.pointee.drainer), qtshim_tls_get())
    defer { qtshim_atomic_store_ptr(backlog.field(&backlog.pointee.drainer), nil) }
    while true {
        backlog.pointee.lock.lock()
        var items = backlog.pointee.items
        backlog.pointee.items = Vector()
        if items.isEmpty { qtshim_atomic_store_u32(backlog.field(&backlog.pointee.gateOpen), 1) }
        backlog.pointee.lock.unlock()
        if items.isEmpty {
            items.free()
            // A direct synchronous subscription leaves the routed state with its replay
            // (blocked meanwhile, it stays blocked; nothing if it was disposed).
            if Subscription.queue(sub) == nil && sub.pointee.flags & subOnce == 0 {
                SubState.leaveRouted(sub)
            }
            return
        }
        items.forEach { deliverStored(sub, $0) }
        items.free()
    }
}

/// Delivers a stored event (taking `payload`'s reference) to one subscription, as a
/// queued delivery would: the dispatch it came from is over, so it cannot be stopped.
func deliverStored(_ sub: UnsafeMutablePointer<Subscription>, _ payload: UnsafeMutablePointer<Payload>) {
    let once = sub.pointee.flags & subOnce != 0
    if let owner = sub.pointee.extra?.pointee.owner, SubState.isLive(sub), ownerGone(sub, owner) {
        payload.release()
        return
    }
    // Blocked or not: the event was on its way before any block (qtbus.h,
    // qtbus_token_block).
    guard SubState.isLive(sub), !once || SubState.claimStoredOnce(sub) else {
        payload.release()
        return
    }
    let tracing = deliverTracer(sub)
    if once { finishOnce(sub) }  // before the delivery, as in deliverRouted
    if Subscription.queue(sub) != nil {
        enqueueDelivery(sub, payload, once: once, tracing: tracing)
    } else {
        var view = EventView(payload: payload, queued: true)
        handlingEvent(view.headers) {
            withUnsafeMutablePointer(to: &view) { view in
                if tracing != nil || qtshim_probe_deliver_enabled() {
                    deliverInstrumented(sub, view, queued: false, tracing: tracing)
                } else {
                    sub.pointee.handler(OpaquePointer(view), sub.pointee.userdata)
                }
            }
        }
        payload.release()
    }
}

enum KeepResult {
    /// The type entry and the dispatch's start sequence.
    case kept(UnsafeMutablePointer<TypeEntry>, UInt64)
    /// QTBUS_ECLOSED or QTBUS_ENOMEM, with nothing kept.
    case failed(Int32)
}

/// Keeps a sticky event and returns its type entry and the dispatch's start sequence,
/// read in the same critical section (see the top of this file).  `event` gets a
/// payload if it had none.
func keepSticky(_ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing) -> KeepResult {
    withRegistry { _, after in
        if isClosed(bus) { return .failed(failClosed()) }
        // The copy last: every step before it can fail without changing what is seen.
        guard let type = typeEntry(bus, event.type), let kept = type.pointee.sticky.record(event.subtype),
            event.tryEnsurePayload()
        else { return .failed(QTBUS_ENOMEM.rawValue) }
        event.payload!.pointee.sticky = true
        event.payload!.retain()
        if let replaced = type.pointee.sticky.fill(kept, event.payload!) { after.release(replaced) }
        return .kept(type, type.pointee.seq)
    }
}

/// qtbus_sticky_clear.
func clearSticky(_ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ subtype: CName?) -> Int32 {
    withRegistry { _, after in
        if isClosed(bus) { return failClosed() }
        guard let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, type) else { return 0 }
        return Int32(entry.pointee.sticky.clear(subtype, all: subtype == nil, &after))
    }
}
