// Sticky events and REPLAY subscriptions.
//
// The promise: replay then live has no gap, no duplicate, and keeps order.
//
// No gap, no duplicate: a sticky dispatch stores its event and reads the type's
// subscription sequence in one critical section of the registry lock, and a REPLAY
// subscribe links its nodes and collects the kept events in one critical section.
// So either the subscription existed when the event was kept (its sequence is <= the
// dispatch's start: live delivery reaches it, and the event was not collected) or it
// did not (the dispatch skips it, and the event was collected for replay).
//
// Order: live dispatches on other threads can reach the new subscription before the
// subscribing thread has delivered the replay.  While replaying, the subscription's
// gate is shut (its backlog's `gateOpen == 0`, made before its nodes are published): dispatchers
// append to its backlog instead of delivering, and the subscribing thread delivers the
// replay, then the backlog, and opens the gate only when the backlog is empty.
import CQtbusShims
import Glibc

/// Under the registry lock, right after linking a REPLAY subscription.
func collectReplay(_ type: UnsafeMutablePointer<TypeEntry>, _ subtypes: [CName]) -> [UnsafeMutablePointer<Payload>] {
    type.pointee.sticky.matching(subtypes.map(\.key))
}

/// On the subscribing thread, after the lock: replay, then the backlog, then open.
func runReplay(_ sub: UnsafeMutablePointer<Subscription>, _ replay: [UnsafeMutablePointer<Payload>]) {
    for p in replay { deliverStored(sub, p) }
    let backlog = sub.pointee.extra!.pointee.backlog!
    while true {
        backlog.pointee.lock.lock()
        let items = backlog.pointee.items
        backlog.pointee.items = []
        if items.isEmpty { qtbus_atomic_store_u32(backlog.field(\.gateOpen), 1) }
        backlog.pointee.lock.unlock()
        if items.isEmpty {
            // A plain synchronous subscription leaves the special state with its replay
            // (the CAS fails, harmlessly, if it was disposed meanwhile).
            if Subscription.queue(sub) == nil && sub.pointee.flags & subOnce == 0 {
                _ = qtbus_atomic_cas_u8(sub.field(\.state), SubState.special, SubState.plain)
            }
            return
        }
        for p in items { deliverStored(sub, p) }
    }
}

/// Delivers a stored event (taking `payload`'s reference) to one subscription, as a
/// queued delivery would: the dispatch it came from is over, so it cannot be stopped.
func deliverStored(_ sub: UnsafeMutablePointer<Subscription>, _ payload: UnsafeMutablePointer<Payload>) {
    let once = sub.pointee.flags & subOnce != 0
    guard SubState.isLive(sub),
          !once || qtbus_atomic_cas_u8(sub.field(\.state), SubState.special, SubState.fired) else {
        payloadRelease(payload)
        return
    }
    if once { finishOnce(sub) }  // before the delivery, as in deliverSpecial
    if Subscription.queue(sub) != nil {
        enqueueDelivery(sub, payload, once: once)
    } else {
        var view = EventView(payload: payload, queued: true)
        withUnsafeMutablePointer(to: &view) { sub.pointee.handler(OpaquePointer($0), sub.pointee.userdata) }
        payloadRelease(payload)
    }
}

/// Keeps a sticky event and returns its type entry and the dispatch's start sequence,
/// read in the same critical section (see the top of this file).  `event` gets a
/// payload if it had none.  Nil when the bus is closed.
func keepSticky(_ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing) -> (UnsafeMutablePointer<TypeEntry>, UInt64)? {
    var replaced: UnsafeMutablePointer<Payload>? = nil
    let result: (UnsafeMutablePointer<TypeEntry>, UInt64)? = registry.withLock { _ in
        if isClosed(bus) { return nil }
        event.ensurePayload()
        let type = typeEntry(bus, event.type)
        payloadRetain(event.payload!)
        replaced = type.pointee.sticky.keep(event.subtype.map(\.key), event.payload!)
        return (type, type.pointee.seq)
    }
    if let replaced { payloadRelease(replaced) }
    return result
}

/// qtbus_sticky_clear.
func clearSticky(_ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ subtype: CName?) -> Int32 {
    var dropped: [UnsafeMutablePointer<Payload>] = []
    let status: Int32 = registry.withLock { _ in
        if isClosed(bus) { return QTBUS_ECLOSED.rawValue }
        guard let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, type) else { return 0 }
        dropped = entry.pointee.sticky.clear(subtype.map(\.key), all: subtype == nil)
        return Int32(dropped.count)
    }
    for p in dropped { payloadRelease(p) }
    return status
}
