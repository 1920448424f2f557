// SPDX-License-Identifier: MIT
// qtbus_bus_wait_idle: waits until a bus has no queued work in flight (its queued
// deliveries and posted dispatches: the high half of `Bus.pins`, Store/Bus.swift).
//
// The waiter registers in the same word (`Bus.waiterUnit`), which also keeps the bus
// allocated, so the end of queued work learns from its one atomic whether to wake
// anybody: the queued path pays no further access for it.  The waiter sleeps on the
// high half (a futex); the piece of work that brings it to 0 wakes it.  Work posted to
// the main queue moves the count once more after its post and wakes a waiter, which
// on the main thread drains it (`mainWorkPosted`).
import CQtbusShims
import CQtbusLibc

/// The first part of qtbus_bus_wait_idle, in a memory section: refuses a call from a
/// handler, then registers the caller as a waiter (the bus stays allocated until
/// `waitIdle` returns).  `unit`: what was added to `pins`, `Bus.waiterUnit`; or, when
/// the waiters' count is full (4095 threads waiting on one bus), a plain pin, and that
/// caller looks every millisecond instead of sleeping until woken.
func startIdleWait(_ bus: UnsafeMutablePointer<Bus>, _ unit: inout UInt64) -> Int32 {
    if qtshim_queued_current() != 0 || inDispatchSection() {
        return fail(QTBUS_EINVAL, "called from inside a handler (it would wait for its own end)")
    }
    if isClosed(bus) { return failClosed() }
    let pins = bus.field(&bus.pointee.pins)
    while true {
        let seen = qtshim_atomic_load_u64(pins)
        unit = seen & Bus.waiterMask == Bus.waiterMask ? 1 : Bus.waiterUnit
        if qtshim_atomic_cas_u64(pins, seen, seen &+ unit) { return QTBUS_OK.rawValue }
    }
}

/// Whether this thread is inside a dispatch section: a handler, synchronous or of a
/// posted dispatch, is running on it (the caller's memory section has repaired the
/// sections of callbacks that did not return).
private func inDispatchSection() -> Bool {
    guard let raw = qtshim_tls_get() else { return false }
    return raw.assumingMemoryBound(to: ThreadRecord.self).pointee.depth != 0
}

/// The wait itself, after `startIdleWait` (outside any section: a long wait must not
/// hold back the release of what other threads retire).  True when the bus went idle,
/// false when `timeoutMs` (negative: no limit) passed first.  Drops the waiter's `unit`.
func waitIdle(_ bus: UnsafeMutablePointer<Bus>, timeoutMs: Int32, unit: UInt64) -> Bool {
    defer { unpinBus(bus, unit) }
    let onMain = qtshim_is_main_thread()
    let deadline: UInt64? = timeoutMs < 0 ? nil : qtshim_now_ns() &+ UInt64(timeoutMs) * 1_000_000
    while true {
        // Main-queue work only a drain here runs (see qtbus.h).
        if onMain { _ = mainDrain() }
        let inFlight = qtshim_atomic_load_u64(bus.field(&bus.pointee.pins)) >> 32
        if inFlight == 0 {
            qtshim_tsan_acquire(bus)
            return true
        }
        var remaining: Int64 = -1
        if let deadline {
            let now = qtshim_now_ns()
            if now >= deadline { return false }
            remaining = Int64(deadline - now)
        }
        // Main-queue work posted before the count was read: drain it first.  Work
        // posted later moves the count (`mainWorkPosted`), so the sleep below ends.
        if onMain && qtshim_main_queue_poll(0) > 0 { continue }
        // Returns at once if the count moved meanwhile; then it is read again.  A caller
        // not counted as a waiter is not woken: it looks again after 1 ms.
        let limit: Int64 = unit == Bus.waiterUnit ? remaining : remaining < 0 ? 1_000_000 : min(remaining, 1_000_000)
        qtshim_idle_wait(idleWord(bus), UInt32(truncatingIfNeeded: inFlight), limit)
    }
}
