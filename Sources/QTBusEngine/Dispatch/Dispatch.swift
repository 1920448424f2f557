// SPDX-License-Identifier: MIT
// The dispatch path: from a C name to the handlers, with no lock, no allocation for a
// synchronous dispatch (but the first one of a type never seen, see `learnType`), no
// Swift String, and no write to memory that another dispatching thread writes (only the
// thread's own reclamation record, an atomic claim for ONCE subscriptions, pins for
// queued deliveries, and, with a trace hook set, the hook's call count: Trace.swift).
//
// The story of one dispatch, top to bottom: the type found (by name: dispatchEvent, or
// LastTypeByName.swift for qtbus_dispatch; by id: dispatchById), the bus's flags tested
// once (dispatchResolved), the subtype's list looked up and the walk chosen
// (dispatchFound), then the walk itself (`deliver`, `visit`, `deliverRouted`).  The
// walks that are not here: the delivery array's (DeliveryArray.swift, a plain dispatch
// with no subtype) and the pattern walk (PatternDispatch.swift).  Dispatches posted to
// a queue are PostedDispatch.swift's.
//
// Order: the type's whole-type list and the event subtype's list are each sorted by
// priority, then subscription order; the walk merges them, taking the subtype's node
// first at equal priority (QTEventBus delivers specific before general).
import CQtbusShims
import CQtbusLibc

let stickyFlag = UInt32(QTBUS_EVENT_STICKY)
/// The desc's headers are set (the boundary reads them; the walks ignore the bit).
let headersFlag = UInt32(QTBUS_EVENT_HEADERS)
/// Only reported (qtbus_event_flags); a dispatch refuses it as an unknown flag.
let requestFlag = UInt32(QTBUS_EVENT_REQUEST)

/// Dispatches `event` on `bus`.  The caller is inside an epoch and has checked the
/// flags and the data/size pair.  On success (>= 0) the event's object or payload
/// reference was consumed; on failure nothing was taken.
func dispatchEvent(_ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing, flags: UInt32) -> Int32 {
    let type: UnsafeMutablePointer<TypeEntry>?
    do { type = try foundOrLearned(bus, event.type) } catch { return error.value }
    return dispatchResolved(bus, type, &event, flags: flags)
}

/// The entry of the hashed name `name` on `bus`, learned when there is none (nil: not
/// learned, `learnType`); throws the reported failure of a name that is not UTF-8.
@inline(__always)
func foundOrLearned(_ bus: UnsafeMutablePointer<Bus>, _ name: CName) throws(QTBusStatus)
    -> UnsafeMutablePointer<TypeEntry>?
{
    if let type = NameTable<TypeEntry>.lookup(qtshim_atomic_load_ptr(bus.field(&bus.pointee.types)), name) {
        return type
    }
    // A name that matched a stored one was validated when it was stored.
    if !name.isValidUTF8 { throw QTBusStatus(failName(name.bytes, .type)) }
    return learnType(bus, name)
}

/// qtbus_dispatch_id, inside a dispatch section.  A type nobody listens to is answered
/// here, before the dispatch's frame is made: on that path this function saves no
/// register (but around the release hook's call); the dispatch itself is
/// `dispatchResolvedId`, reached by a tail call (docs/perf-notes.md, "The no-subscriber
/// path").
@inline(never)
func dispatchById(
    _ bus: UnsafeMutablePointer<Bus>, _ id: UInt64, _ desc: UnsafePointer<qtbus_event_desc>,
    _ subtype: CName?, _ record: UnsafeMutablePointer<ThreadRecord>
) -> Int32 {
    guard let found = resolvedType(bus, id) else { return failTypeId(bus, id) }
    if nobodyListens(bus, found) && subtype == nil && desc.pointee.flags == 0 {
        if let release = desc.pointee.object_release { release(desc.pointee.object) }
        return 0
    }
    return dispatchResolvedId(bus, found, desc, subtype, record)
}

/// Inside a dispatch section (the resolved table stays).
@inline(never)
private func dispatchResolvedId(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>,
    _ desc: UnsafePointer<qtbus_event_desc>, _ subtype: CName?, _ record: UnsafeMutablePointer<ThreadRecord>
) -> Int32 {
    let d = desc
    let flags = d.pointee.flags
    // The headers here, not at the boundary: the no-subscriber answer above stays as it
    // was (an event nobody receives needs none; one with QTBUS_EVENT_HEADERS gets here).
    return withHeaders(d, flags: flags, record) { headers in
        var event = Outgoing(
            type: type.pointee.name.cName, subtype: subtype, data: d.pointee.data, size: d.pointee.size,
            object: d.pointee.object, objectRelease: d.pointee.object_release)
        event.headers = headers
        return dispatchResolved(bus, type, &event, flags: flags)
    }
}

/// Whether a dispatch of `type` without a subtype or flags reaches nobody and has
/// nothing else to do: no subscription in its whole list, no owned subscription to
/// sweep, nothing on the bus's flags (closed, traced, patterns), no listener of
/// QTNoSubscriberEvent and no tracer on the `dispatch` probe.  The caller then only
/// lets the event's object go (docs/perf-notes.md, "The no-subscriber path").
@inline(__always)
func nobodyListens(_ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>) -> Bool {
    qtshim_atomic_load_ptr(type.field(&type.pointee.whole.head)) == nil
        && qtshim_atomic_load_u32(bus.field(&bus.pointee.flags)) == 0
        && qtshim_atomic_load_u64(type.field(&type.pointee.seq)) & TypeEntry.hasOwned == 0
        && qtshim_atomic_load_u64(bus.field(&bus.pointee.noSubscriberListeners)) == 0
        && !qtshim_probe_dispatch_enabled()
}

/// `dispatchEvent` once the type is known (nil: a type nobody subscribed to and not
/// learned); qtbus_dispatch_id starts here, with `event.type` the entry's name.
@inline(__always)
func dispatchResolved(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
    _ event: inout Outgoing, flags: UInt32
) -> Int32 {
    // One test for a closed bus, a traced one (Trace.swift) and one with pattern
    // subscriptions: nothing else here knows about tracing or patterns.
    let busFlags = qtshim_atomic_load_u32(bus.field(&bus.pointee.flags))
    if busFlags != 0 {
        // A bus with patterns and nothing else flagged: its own walk, untraced.
        if busFlags == Bus.patternsBit {
            return dispatchFound(bus, type, &event, flags: flags, traceDeliveries: false, since: nil, patterns: true)
        }
        return dispatchFlagged(bus, type, &event, flags: flags, busFlags)
    }
    return dispatchFound(bus, type, &event, flags: flags, traceDeliveries: false, since: nil, patterns: false)
}

/// A dispatch on a closed bus, a traced one, or one with pattern subscriptions.
@inline(never)
private func dispatchFlagged(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>?,
    _ event: inout Outgoing, flags: UInt32, _ busFlags: UInt32
) -> Int32 {
    if busFlags & Bus.closedBit != 0 { return failClosed() }
    // Nothing is traced on a thread while a hook runs there.
    let inHook = qtshim_trace_current() != nil
    let traceDeliveries = !inHook && busFlags & Bus.traced(QTBUS_TRACE_DELIVER) != 0
    let since = !inHook && busFlags & Bus.traced(QTBUS_TRACE_DISPATCH) != 0 ? qtshim_now_ns() : nil
    return dispatchFound(
        bus, type, &event, flags: flags, traceDeliveries: traceDeliveries, since: since,
        patterns: busFlags & Bus.patternsBit != 0)
}

/// The dispatch once the bus is known open.  `traceDeliveries`: the bus's hook takes
/// DELIVER records; `since`: when the dispatch started, when it takes DISPATCH records;
/// `patterns`: the bus has pattern subscriptions (false, nil and false, as constants, in
/// the plain dispatch).
@inline(__always)
private func dispatchFound(
    _ bus: UnsafeMutablePointer<Bus>, _ found: UnsafeMutablePointer<TypeEntry>?,
    _ event: inout Outgoing, flags: UInt32, traceDeliveries: Bool,
    since: UInt64?, patterns: Bool
) -> Int32 {
    var type = found
    // The start sequence is read before the subtype list is looked up: every node with
    // a sequence up to it was linked, and its subtype entry published, before the
    // sequence was stored, so the lookup below finds the list of each of them.
    var start: UInt64 = 0
    if flags & stickyFlag != 0 {
        // Cold path: validate the subtype outright, before anything is kept.
        if let subtype = event.subtype, !subtype.isValidUTF8 { return failName(subtype.bytes, .subtype) }
        var keep = keepSticky(bus, &event)
        if event.accepted, case .failed(QTBUS_ENOMEM.rawValue) = keep {
            // Posted or published earlier: the caller was told it was accepted, so it is
            // kept when memory is back rather than dropped (qtbus.h, "Out of memory").
            keep = waitForMemory { () -> KeepResult? in
                let again = keepSticky(bus, &event)
                if case .failed(QTBUS_ENOMEM.rawValue) = again { return nil }
                return again
            }
        }
        switch keep {
        case .kept(let kept, let seq):
            type = kept
            start = seq
            // Kept for later subscribers: the dispatch cannot fail from here on.
            event.accepted = true
        case .failed(let status):
            return status
        }
    } else if let type {
        start = qtshim_atomic_load_u64(type.field(&type.pointee.seq))
    }
    let hasOwned = start & TypeEntry.hasOwned != 0
    start &= ~TypeEntry.hasOwned
    var specific: UnsafeMutablePointer<SubtypeEntry>? = nil
    if let type, let subtype = event.subtype {
        specific = NameTable<SubtypeEntry>.lookup(qtshim_atomic_load_ptr(type.field(&type.pointee.subtypes)), subtype)
        if specific == nil && flags & stickyFlag == 0 && !subtype.isValidUTF8 {
            return failName(subtype.bytes, .subtype)
        }
    } else if let subtype = event.subtype, !subtype.isValidUTF8 {
        return failName(subtype.bytes, .subtype)
    }

    var count: Int32 = 0
    if patterns,
        let reached = deliverWithPatterns(
            bus, type, specific, &event, start,
            instrumented: traceDeliveries || qtshim_probe_deliver_enabled())
    {
        // Pattern subscriptions were among those reached (PatternDispatch.swift), or
        // memory ran out before any was: nothing done, nothing taken.
        if reached < 0 { return reached }
        count = reached
    } else if let type, specific != nil || qtshim_atomic_load_ptr(type.field(&type.pointee.whole.head)) != nil {
        qtshim_tsan_acquire(type)
        // A tracer on the `deliver` probe, or a hook taking DELIVER records, gets the
        // walk that reports each call; the other has no report site at all (one check
        // per dispatch, none per handler).
        if traceDeliveries || qtshim_probe_deliver_enabled() {
            count = deliver(type, specific, &event, start, Instrumented.self)
        } else if specific == nil {
            count = deliverArray(type, &event, start)
        } else {
            count = deliver(type, specific, &event, start, Plain.self)
        }
    }
    // Swift freeWith subscriptions whose owner is gone end here, whatever their subtypes.
    if hasOwned, let type {
        sweepOwners(type, specific, start << 16 | ListNode.indexMask, stopped: event.stopped)
    }
    if qtshim_probe_dispatch_enabled() { probeDispatch(bus, event.type.bytes, event.subtype?.bytes, count) }
    // Before the event is let go: the record shows its names.
    if let since { emitDispatch(bus, event.type.bytes, event.subtype?.bytes, reached: count, since: since) }
    if count == 0 && qtshim_atomic_load_u64(bus.field(&bus.pointee.noSubscriberListeners)) != 0
        && !noSubscriberName.isSame(as: event.type)
    {
        dispatchNoSubscriber(bus, &event)
        return 0
    }
    event.finish()
    return count
}

/// Re-dispatches an event nobody received as QTNoSubscriberEvent (subtype: its type),
/// handing the object over.
private func dispatchNoSubscriber(_ bus: UnsafeMutablePointer<Bus>, _ event: inout Outgoing) {
    var inner = Outgoing(
        type: noSubscriberName.name, subtype: event.type, data: event.data, size: event.size,
        object: event.object, objectRelease: event.objectRelease)
    inner.borrowed = event.borrowed  // nil when there is a payload
    inner.headers = event.headers
    // The outer dispatch succeeded: this one cannot fail.
    inner.accepted = true
    if let p = event.payload {
        // The original payload keeps the object; copies for queued deliveries hold it.
        inner.objectRelease = nil
        inner.payload = makePayloadWaiting(
            type: inner.type, subtype: inner.subtype, data: inner.data, size: inner.size,
            object: p.pointee.object, objectRelease: nil, parent: p, headers: event.headers)
        inner.data = UnsafeRawPointer(inner.payload!.data)
        p.release()
    }
    event.payload = nil
    event.objectRelease = nil
    if dispatchEvent(bus, &inner, flags: 0) < 0 { inner.finish() }
}

/// Whether a walk reports each synchronous handler call (the `deliver` probe, DELIVER
/// records: `deliverInstrumented`): a type, so that each walk is compiled on its own
/// with the answer folded in.
protocol WalkMode { static var instrumented: Bool { get } }
enum Instrumented: WalkMode { static var instrumented: Bool { true } }
enum Plain: WalkMode { static var instrumented: Bool { false } }

/// Walks the list(s) and delivers; returns how many subscriptions were reached (and
/// sets `event.stopped` when a handler stopped it).
@inline(__always)
func deliver<Mode: WalkMode>(
    _ type: UnsafeMutablePointer<TypeEntry>, _ specific: UnsafeMutablePointer<SubtypeEntry>?,
    _ event: inout Outgoing, _ start: UInt64, _: Mode.Type
) -> Int32 {
    let instrumented = Mode.instrumented
    // Found here rather than passed: the plain walk takes no argument for it.
    let tracing = instrumented ? deliverTracer(type.pointee.bus) : nil
    var view = EventView(event)
    var count: Int32 = 0
    // The largest `order` a node may have to receive this dispatch (see ListNode.order).
    let last = start << 16 | ListNode.indexMask
    // Unprotected, as in deliverArray (inlined there, a protected walk protected both).
    _withUnprotectedUnsafeMutablePointer(to: &view) { view in
        var w = qtshim_atomic_load_ptr(type.field(&type.pointee.whole.head))
        if let specific {
            var s = qtshim_atomic_load_ptr(specific.field(&specific.pointee.list.head))
            // Merge: the subtype's node first at equal priority.
            while let sr = s {
                let sn = sr.assumingMemoryBound(to: ListNode.self)
                if let wr = w,
                    Subscription.of(wr.assumingMemoryBound(to: ListNode.self)).pointee.priority
                        > Subscription.of(sn).pointee.priority
                {
                    let wn = wr.assumingMemoryBound(to: ListNode.self)
                    if visit(wn, view, &event, last, &count, instrumented, tracing) { return }
                    w = qtshim_atomic_load_ptr(wn.field(&wn.pointee.next))
                } else {
                    if visit(sn, view, &event, last, &count, instrumented, tracing) { return }
                    s = qtshim_atomic_load_ptr(sn.field(&sn.pointee.next))
                }
            }
        }
        while let wr = w {
            let wn = wr.assumingMemoryBound(to: ListNode.self)
            if visit(wn, view, &event, last, &count, instrumented, tracing) { return }
            w = qtshim_atomic_load_ptr(wn.field(&wn.pointee.next))
        }
    }
    return count
}

/// Delivers to one node's subscription if it should receive this dispatch; true when a
/// handler stopped the event.  The next pointer is read by the caller after this
/// returns, so a node the handler unlinked is skipped.
@inline(__always)
func visit(
    _ node: UnsafeMutablePointer<ListNode>, _ view: UnsafeMutablePointer<EventView>,
    _ event: inout Outgoing, _ last: UInt64, _ count: inout Int32, _ instrumented: Bool,
    _ tracing: UnsafeMutablePointer<Bus>?
) -> Bool {
    // Newer than this dispatch: subscribed during it, so it does not receive it.
    guard node.pointee.order <= last else { return false }
    let sub = Subscription.of(node)
    let state = qtshim_atomic_load_u8(sub.field(&sub.pointee.state))
    if state == SubState.direct {
        if instrumented {
            deliverInstrumented(sub, view, queued: false, tracing: tracing)
        } else {
            sub.pointee.handler(OpaquePointer(view), sub.pointee.userdata)
        }
        count += 1
    } else if state == SubState.routed {
        if deliverRouted(sub, view, &event, tracing) { count += 1 }
    } else {
        // Blocked (Block.swift), fired or disposed: not reached, not counted.
        return false
    }
    guard view.pointee.stopped else { return false }
    event.stopped = true
    return true
}

/// ONCE, queued, or gated (replaying) subscriptions.
@inline(never)
private func deliverRouted(
    _ sub: UnsafeMutablePointer<Subscription>, _ view: UnsafeMutablePointer<EventView>,
    _ event: inout Outgoing, _ tracing: UnsafeMutablePointer<Bus>?
) -> Bool {
    if let owner = sub.pointee.extra?.pointee.owner, ownerGone(sub, owner) { return false }
    if let backlog = sub.pointee.extra?.pointee.backlog, backlog.parks {
        event.ensurePayload()
        if backlogAppend(backlog, event.payload!) { return true }
    }
    let once = sub.pointee.flags & subOnce != 0
    if once {
        guard qtshim_atomic_cas_u8(sub.field(&sub.pointee.state), SubState.routed, SubState.fired) else { return false }
        // Unlinked before its one delivery, so counts and lookups made by the handler
        // already see it gone; its memory lives until this dispatch's epoch ends.
        finishOnce(sub)
    }
    if let queue = Subscription.queue(sub) {
        if event.payload == nil, let pool = queue.ring?.pointee.pool {
            event.ensurePayload(pool: pool)
        } else {
            event.ensurePayload()
        }
        event.payload!.retain()
        return enqueueDelivery(sub, event.payload!, once: once, tracing: tracing, mayWait: true)
    } else {
        if tracing != nil || qtshim_probe_deliver_enabled() {
            deliverInstrumented(sub, view, queued: false, tracing: tracing)
        } else {
            sub.pointee.handler(OpaquePointer(view), sub.pointee.userdata)
        }
    }
    return true
}
