// SPDX-License-Identifier: MIT
// What a tracer sees: trace hooks (qtbus_trace_set: a bus's hook, the records it gets,
// and how a hook is replaced while other threads call it), and the USDT probe sites.
//
// Zero cost when off: the kinds of a bus's hook sit in `Bus.flags` beside the closed
// bit, so the one test a dispatch makes of that word (`flags != 0`) sends it to the
// slow path for a closed bus and a traced one alike; an untraced dispatch runs no
// tracing code (docs/perf-notes.md, "Tracing off costs nothing").
//
// Where a record is made, and how the hook is reached without a lock:
//   DISPATCH, DELIVER  on the dispatch path, inside its dispatch section: the hook is
//                      read from `Bus.trace`, and its memory outlives the section
//                      (`retireHook` retires it with `retireMemory`).  A delivery queued
//                      by a traced dispatch carries a pin of its bus, and its record is
//                      emitted inside a memory section.
//   SUBSCRIBE, DISPOSE under the registry lock, where `Bus.trace` cannot change: a
//                      TraceNote takes a reference to the hook and a pin of the bus
//                      (the type's name), and is emitted after the unlock, first of
//                      what the unlock runs (a DISPOSE before its RELEASE).
//   RELEASE            at unlink too (the bus may be gone when the release runs): the
//                      retired subscription keeps a reference to the hook.
//   MISUSE             at the C boundary, after the call: the bus may be gone by then
//                      (destroyed concurrently), so its memory is not read at all; the
//                      registry's list of buses whose hook takes MISUSE records gives
//                      the hook (with a reference), under the lock.
//
// Replacing a hook (the gate): `gate` holds `active` while the hook is set, plus one
// per call running.  A call joins by CAS only while `active` is set, so once the
// setter cleared it no call starts.  The setter, unless it runs inside a hook, clears
// `active` and joins in the same CAS, then waits until it is the only one left: when
// qtbus_trace_set returns no call of the old hook runs, and the setter itself runs the
// release.  Inside a hook it cannot wait (two hooks replacing each other's would wait
// for each other): whoever takes the count to zero with `active` clear runs the release,
// the setter or the last call, exactly once.
import CQtbusShims
import CQtbusLibc

struct TraceHook {
    let fn: qtbus_trace_fn
    let userdata: UnsafeMutableRawPointer?
    let release: qtbus_release?
    let kinds: UInt32
    /// Atomic: `active` while set on its bus, plus the calls running (see the top).
    var gate: UInt64 = TraceHook.active
    /// Atomic: the bus's reference (dropped after the grace period that follows the
    /// hook's removal) plus one per record kept for later (notes, retired subscriptions).
    var refs: UInt64 = 1

    static let active: UInt64 = 1 << 63
}

let knownTraceKinds = UInt32(QTBUS_TRACE_ALL.rawValue)

// MARK: - Setting and removing

/// qtbus_trace_set (arguments checked by the caller).
func setTrace(
    _ bus: UnsafeMutablePointer<Bus>, kinds: UInt32, _ fn: qtbus_trace_fn?,
    _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?
) -> Int32 {
    var hook: UnsafeMutablePointer<TraceHook>? = nil
    if let fn {
        guard let h = tryAllocate(TraceHook.self) else { return QTBUS_ENOMEM.rawValue }
        h.initialize(to: TraceHook(fn: fn, userdata: userdata, release: release, kinds: kinds))
        hook = h
    }
    var status = QTBUS_OK.rawValue
    let old: UnsafeMutablePointer<TraceHook>? = withRegistry { state, _ in
        if isClosed(bus) {
            status = failClosed()
            return nil
        }
        guard state.misuseHooks.reserve(1) else {
            status = QTBUS_ENOMEM.rawValue
            return nil
        }
        return swapHook(&state, bus, hook)
    }
    if status != QTBUS_OK.rawValue {
        hook?.deinitialize(count: 1)
        free(hook)
        return status
    }
    if let old { retireHook(old) }
    return QTBUS_OK.rawValue
}

/// qtbus_bus_destroy's last step: the hook goes once the records of what it disposed
/// and released were emitted.
func removeTrace(_ bus: UnsafeMutablePointer<Bus>) {
    if let old = withRegistry({ state, _ in swapHook(&state, bus, nil) }) { retireHook(old) }
}

/// Makes `hook` the bus's; returns the one it replaces.  Under the registry lock, with
/// room for one more entry in `misuseHooks`.
private func swapHook(
    _ state: inout RegistryState, _ bus: UnsafeMutablePointer<Bus>,
    _ hook: UnsafeMutablePointer<TraceHook>?
) -> UnsafeMutablePointer<TraceHook>? {
    let old = qtshim_atomic_load_ptr(bus.field(&bus.pointee.trace))?.assumingMemoryBound(to: TraceHook.self)
    qtshim_atomic_store_ptr(bus.field(&bus.pointee.trace), hook.map { UnsafeMutableRawPointer($0) })
    let flags = qtshim_atomic_load_u32(bus.field(&bus.pointee.flags))
    let traced = (hook?.pointee.kinds ?? 0) << 1
    qtshim_atomic_store_u32(bus.field(&bus.pointee.flags), flags & (Bus.closedBit | Bus.patternsBit) | traced)
    if state.misuseHooks.removeFirst(where: { $0.bus == bus }) { qtshim_trace_misuse_hooks_add(-1) }
    if let hook, hook.pointee.kinds & QTBUS_TRACE_MISUSE.rawValue != 0 {
        state.misuseHooks.appendReserved(MisuseHook(bus: bus, hook: hook))
        qtshim_trace_misuse_hooks_add(1)
    }
    return old
}

/// A bus whose hook takes MISUSE records (RegistryState.misuseHooks).
struct MisuseHook {
    let bus: UnsafeMutablePointer<Bus>
    let hook: UnsafeMutablePointer<TraceHook>
}

/// Takes a hook that was just swapped out of its bus off: no call of it starts any
/// more, its release runs once the calls running are over (see the top), and its
/// memory goes once no section can still read it from the bus and no kept record
/// refers to it.
private func retireHook(_ hook: UnsafeMutablePointer<TraceHook>) {
    let gate = hook.field(&hook.pointee.gate)
    var old = qtshim_atomic_load_u64(gate)
    if qtshim_trace_current() != nil {
        while !qtshim_atomic_cas_u64(gate, old, old & ~TraceHook.active) { old = qtshim_atomic_load_u64(gate) }
        if old & ~TraceHook.active == 0 { runRelease(hook) }
    } else {
        while !qtshim_atomic_cas_u64(gate, old, (old & ~TraceHook.active) + 1) { old = qtshim_atomic_load_u64(gate) }
        var round: UInt32 = 0
        while qtshim_atomic_load_u64(gate) != 1 {
            qtshim_pause(round)
            round &+= 1
        }
        qtshim_atomic_store_u64(gate, 0)
        runRelease(hook)
    }
    reclaimer.retireMemory(UnsafeMutableRawPointer(hook), dropBusReference)
}

private func runRelease(_ hook: UnsafeMutablePointer<TraceHook>) {
    qtshim_tsan_before_release_hooks()
    hook.pointee.release?(hook.pointee.userdata)
}

private let dropBusReference: Finalizer = { raw in
    unrefHook(raw!.assumingMemoryBound(to: TraceHook.self))
}

private func retainHook(_ hook: UnsafeMutablePointer<TraceHook>) {
    _ = qtshim_atomic_fetch_add_u64(hook.field(&hook.pointee.refs), 1)
}

private func unrefHook(_ hook: UnsafeMutablePointer<TraceHook>) {
    guard droppedLastReference(hook, hook.field(&hook.pointee.refs)) else { return }
    hook.deinitialize(count: 1)
    free(hook)
}

// MARK: - USDT probe sites (qtbus_probes.h), out of line: one site each

/// The `dispatch` USDT probe (qtbus_probes.h), when a tracer is attached: one site,
/// however many times the dispatch is inlined.
@inline(never)
func probeDispatch(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafePointer<CChar>, _ subtype: UnsafePointer<CChar>?,
    _ reached: Int32
) {
    qtshim_probe_dispatch(bus, type, subtype, reached)
}

/// The `deliver` USDT probe (qtbus_probes.h), when a tracer is attached.
@inline(never)
func probeDeliver(_ sub: UnsafeMutablePointer<Subscription>, _ type: UnsafePointer<CChar>, queued: Bool) {
    qtshim_probe_deliver(type, SubscriptionPool.token(sub), queued ? 1 : 0)
}

// MARK: - Calling

/// Calls `hook` with `record` if it is still set, takes the record's kind, and this
/// thread is not inside a hook already.  The caller keeps the hook's memory (a
/// section, or a reference).
private func callHook(_ hook: UnsafeMutablePointer<TraceHook>, _ record: inout qtbus_trace_record) {
    guard hook.pointee.kinds & record.kind != 0, qtshim_trace_current() == nil else { return }
    let gate = hook.field(&hook.pointee.gate)
    var old = qtshim_atomic_load_u64(gate)
    repeat {
        guard old & TraceHook.active != 0 else { return }
        if qtshim_atomic_cas_u64(gate, old, old + 1) { break }
        old = qtshim_atomic_load_u64(gate)
    } while true
    qtshim_trace_set_current(hook)
    withUnsafePointer(to: &record) { hook.pointee.fn($0, hook.pointee.userdata) }
    qtshim_trace_set_current(nil)
    qtshim_tsan_handlers_returned()
    if qtshim_atomic_fetch_sub_u64(gate, 1) == 1 { runRelease(hook) }
}

/// Sends `record` to the bus's hook.  Inside a section (see the top).
@inline(never)
func emit(_ bus: UnsafeMutablePointer<Bus>, _ record: inout qtbus_trace_record) {
    guard let raw = qtshim_atomic_load_ptr(bus.field(&bus.pointee.trace)) else { return }
    callHook(raw.assumingMemoryBound(to: TraceHook.self), &record)
}

func traceRecord(_ kind: qtbus_trace_kind) -> qtbus_trace_record {
    qtbus_trace_record(
        kind: kind.rawValue, function: nil, type: nil, subtype: nil, token: qtbus_token(id: 0),
        status: 0, reached: 0, queued: 0, duration_ns: 0)
}

/// A DISPATCH record: the dispatch of `type`/`subtype` reached `reached` subscriptions
/// and took the time since `start`.
@inline(never)
func emitDispatch(
    _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafePointer<CChar>, _ subtype: UnsafePointer<CChar>?,
    reached: Int32, since start: UInt64
) {
    var record = traceRecord(QTBUS_TRACE_DISPATCH)
    record.duration_ns = qtshim_now_ns() &- start
    record.type = type
    record.subtype = subtype
    record.reached = reached
    record.status = reached
    emit(bus, &record)
}

/// A delivery of `type`/`subtype` to the subscription `token` was dropped (a bounded
/// queue's rule, or a Swift subscription's buffer; `rule`: the overflow rule, or the
/// call that woke its dispatcher): the `drop` USDT probe when a tracer is attached, and
/// a DROP record when the bus's hook takes them.  The bus is pinned by the dropped
/// delivery's queued work; the record is sent inside a memory section of its own.
@inline(never)
func reportDrop(
    _ bus: UnsafeMutablePointer<Bus>, token: UInt64, _ type: UnsafePointer<CChar>,
    _ subtype: UnsafePointer<CChar>?, _ rule: StaticString
) {
    let function = UnsafeRawPointer(rule.utf8Start).assumingMemoryBound(to: CChar.self)
    if qtshim_probe_drop_enabled() { qtshim_probe_drop(bus, type, token, function) }
    guard qtshim_atomic_load_u32(bus.field(&bus.pointee.flags)) & Bus.traced(QTBUS_TRACE_DROP) != 0,
        qtshim_trace_current() == nil
    else { return }
    var record = traceRecord(QTBUS_TRACE_DROP)
    record.type = type
    record.subtype = subtype
    record.token = qtbus_token(id: token)
    record.function = function
    withMemoryEpoch { emit(bus, &record) }
}

/// Calls a subscription's handler with the instruments a tracer asked for: the
/// `deliver` probe, and a DELIVER record when `bus` is given (its hook takes them).
@inline(never)
func deliverInstrumented(
    _ sub: UnsafeMutablePointer<Subscription>, _ view: UnsafeMutablePointer<EventView>,
    queued: Bool, tracing bus: UnsafeMutablePointer<Bus>?
) {
    if qtshim_probe_deliver_enabled() { probeDeliver(sub, view.pointee.type, queued: queued) }
    guard let bus else {
        sub.pointee.handler(OpaquePointer(view), sub.pointee.userdata)
        return
    }
    let token = SubscriptionPool.token(sub)
    let start = qtshim_now_ns()
    sub.pointee.handler(OpaquePointer(view), sub.pointee.userdata)
    var record = traceRecord(QTBUS_TRACE_DELIVER)
    record.duration_ns = qtshim_now_ns() &- start
    record.type = view.pointee.type
    record.subtype = view.pointee.subtype
    record.token = qtbus_token(id: token)
    record.queued = queued ? 1 : 0
    // A queued delivery runs outside any section; its bus is pinned (QueuedDelivery.swift).
    if queued { withMemoryEpoch { emit(bus, &record) } } else { emit(bus, &record) }
}

/// `bus` when its hook takes DELIVER records (and this thread is not inside a hook),
/// else nil.
@inline(__always)
func deliverTracer(_ bus: UnsafeMutablePointer<Bus>) -> UnsafeMutablePointer<Bus>? {
    guard qtshim_atomic_load_u32(bus.field(&bus.pointee.flags)) & Bus.traced(QTBUS_TRACE_DELIVER) != 0,
        qtshim_trace_current() == nil
    else { return nil }
    return bus
}

/// The same for a delivery to `sub`.  Inside a dispatch section (the subscription's
/// entries stay allocated).
@inline(__always)
func deliverTracer(_ sub: UnsafeMutablePointer<Subscription>) -> UnsafeMutablePointer<Bus>? {
    deliverTracer(Subscription.type(sub).pointee.bus)
}

/// A MISUSE record, for a failed call naming `bus`: signals.c's calls report here too.
/// Never reads the bus (see the top).
@_cdecl("qtshim_trace_misuse")
func traceMisuse(_ bus: OpaquePointer?, _ function: UnsafePointer<CChar>?, _ status: Int32) {
    guard let bus, qtshim_trace_misuse_somewhere(), qtshim_trace_current() == nil else { return }
    let target = UnsafeMutablePointer<Bus>(bus)
    let hook: UnsafeMutablePointer<TraceHook>? = withRegistry { state, _ in
        var found: UnsafeMutablePointer<TraceHook>? = nil
        state.misuseHooks.forEach { if $0.bus == target { found = $0.hook } }
        if let found { retainHook(found) }
        return found
    }
    guard let hook else { return }
    var record = traceRecord(QTBUS_TRACE_MISUSE)
    record.function = function
    record.status = status
    callHook(hook, &record)
    unrefHook(hook)
}

// MARK: - Records made under the registry lock

/// A SUBSCRIBE or DISPOSE record made under the registry lock, emitted after the unlock
/// (AfterUnlock), with a reference to the hook of that moment and a pin of its bus.
struct TraceNote {
    var next: UnsafeMutablePointer<TraceNote>? = nil
    let hook: UnsafeMutablePointer<TraceHook>
    let bus: UnsafeMutablePointer<Bus>
    let type: UnsafeMutablePointer<TypeEntry>
    let kind: qtbus_trace_kind
    let token: UInt64
    let function: UnsafePointer<CChar>?
}

/// A note for `type`'s bus when its hook takes `kind`, else nil.  Under the registry
/// lock; waits for memory (what it records cannot fail).
func traceNote(
    _ kind: qtbus_trace_kind, _ type: UnsafeMutablePointer<TypeEntry>, token: UInt64,
    function: StaticString? = nil
) -> UnsafeMutablePointer<TraceNote>? {
    let bus = type.pointee.bus
    guard qtshim_atomic_load_u32(bus.field(&bus.pointee.flags)) & Bus.traced(kind) != 0 else { return nil }
    return makeNote(kind, bus, type, token, function)
}

@inline(never)
private func makeNote(
    _ kind: qtbus_trace_kind, _ bus: UnsafeMutablePointer<Bus>, _ type: UnsafeMutablePointer<TypeEntry>,
    _ token: UInt64, _ function: StaticString?
) -> UnsafeMutablePointer<TraceNote> {
    let hook = qtshim_atomic_load_ptr(bus.field(&bus.pointee.trace))!.assumingMemoryBound(to: TraceHook.self)
    retainHook(hook)
    pinBus(bus)
    let note = allocateWaiting(TraceNote.self)
    note.initialize(
        to: TraceNote(
            hook: hook, bus: bus, type: type, kind: kind, token: token,
            function: function.map { cText($0) }))
    return note
}

/// Emits and frees a chain of notes, the last one made first in the chain, in the order
/// they were made.  After the unlock.
func emitNotes(_ last: UnsafeMutablePointer<TraceNote>) {
    var reversed: UnsafeMutablePointer<TraceNote>? = nil
    var next: UnsafeMutablePointer<TraceNote>? = last
    while let note = next {
        next = note.pointee.next
        note.pointee.next = reversed
        reversed = note
    }
    var cursor = reversed
    while let note = cursor {
        cursor = note.pointee.next
        var record = traceRecord(note.pointee.kind)
        record.type = UnsafePointer(note.pointee.type.pointee.name.bytes)
        record.token = qtbus_token(id: note.pointee.token)
        record.function = note.pointee.function
        callHook(note.pointee.hook, &record)
        unrefHook(note.pointee.hook)
        unpinBus(note.pointee.bus)
        note.deinitialize(count: 1)
        free(note)
    }
}

// MARK: - Unlinking: DISPOSE and RELEASE records

/// At unlink, under the lock, when the bus's hook takes DISPOSE or RELEASE records: the
/// DISPOSE note, and what the RELEASE record will need (`keepReleaseTracer`).
@inline(never)
func traceUnlink(
    _ sub: UnsafeMutablePointer<Subscription>, _ type: UnsafeMutablePointer<TypeEntry>,
    _ reason: DisposeReason, _ after: inout AfterUnlock
) {
    let token = SubscriptionPool.token(sub)
    if let note = traceNote(QTBUS_TRACE_DISPOSE, type, token: token, function: reason.text) { after.note(note) }
    Subscription.keepReleaseTracer(sub, type.pointee.bus)
}

/// A retired subscription's RELEASE record: its hook and token, kept from unlink to
/// release in two fields nothing else uses meanwhile.
extension Subscription {
    /// Set while a hook is kept; 0 after unlink otherwise (`unlinkFromBag`).  Never a
    /// bag slot + 1 (a bag's dispose skips records that are not in it).
    private static let keptMark = UInt32.max

    /// Keeps a reference to the bus's hook when it takes RELEASE records and there is a
    /// release to report: in the inline node's `prev` (nothing reads it once the node is
    /// unlinked), marked in `bagOrFreeLink` (0 from unlink to release).
    static func keepReleaseTracer(_ sub: UnsafeMutablePointer<Subscription>, _ bus: UnsafeMutablePointer<Bus>) {
        guard sub.pointee.release != nil,
            qtshim_atomic_load_u32(bus.field(&bus.pointee.flags)) & Bus.traced(QTBUS_TRACE_RELEASE) != 0
        else { return }
        let hook = qtshim_atomic_load_ptr(bus.field(&bus.pointee.trace))!.assumingMemoryBound(to: TraceHook.self)
        retainHook(hook)
        sub.pointee.node.prev = UnsafeMutableRawPointer(hook).assumingMemoryBound(to: ListNode.self)
        sub.pointee.bagOrFreeLink = keptMark
    }

    /// Whether `keepReleaseTracer` kept a hook (at release, before the record is given back).
    @inline(__always)
    static func keptReleaseTracer(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        sub.pointee.bagOrFreeLink == keptMark
    }

    /// The hook `keepReleaseTracer` kept, with the subscription's token.  Read, not
    /// cleared: only the record's return to the pool, under the lock, writes the field.
    static func releaseTracer(_ sub: UnsafeMutablePointer<Subscription>) -> (
        hook: UnsafeMutablePointer<TraceHook>, token: UInt64
    ) {
        let hook = UnsafeMutableRawPointer(sub.pointee.node.prev!).assumingMemoryBound(to: TraceHook.self)
        return (hook, SubscriptionPool.token(sub))
    }
}

/// The RELEASE record of a subscription whose release hook just ran; drops the hook.
func emitRelease(_ kept: (hook: UnsafeMutablePointer<TraceHook>, token: UInt64)) {
    var record = traceRecord(QTBUS_TRACE_RELEASE)
    record.token = qtbus_token(id: kept.token)
    callHook(kept.hook, &record)
    unrefHook(kept.hook)
}
