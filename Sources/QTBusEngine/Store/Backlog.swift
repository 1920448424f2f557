// SPDX-License-Identifier: MIT
// A REPLAY subscription's backlog: live deliveries parked while its replay runs
// (StickyReplay.swift explains the gate).
import CQtbusShims
import CQtbusLibc

/// Live deliveries that reached a REPLAY subscription while its replay was running.
struct Backlog {
    /// Under `lock` (first: see `field(_:)`).
    var items: Vector<UnsafeMutablePointer<Payload>>
    let lock: RawLock
    /// Atomic: 0 while the replay runs.
    var gateOpen: UInt32 = 0
    /// Atomic: the reclamation record of the thread delivering the replay while it
    /// does.  A dispatch that thread makes from inside a replayed handler is nested in
    /// the replay and is delivered at once, depth-first, as inside any dispatch; parked,
    /// it would reach the handler only after the replay, and a handler that dispatches
    /// its own type until some depth would never get deeper than one.
    var drainer: UnsafeMutableRawPointer? = nil
}

extension UnsafeMutablePointer where Pointee == Backlog {
    /// Whether a dispatch reaching the subscription must be parked: its replay runs, on
    /// another thread or further out on this one.
    @inline(__always)
    var parks: Bool {
        qtshim_atomic_load_u32(field(&pointee.gateOpen)) == 0
            && qtshim_atomic_load_ptr(field(&pointee.drainer)) != qtshim_tls_get()
    }
}

/// A shut backlog that starts with the kept events a REPLAY subscription replays
/// (it takes the vector and the references); nil, with nothing taken, when out of memory.
func makeBacklog(replaying kept: Vector<UnsafeMutablePointer<Payload>>) -> UnsafeMutablePointer<Backlog>? {
    guard let b = tryAllocate(Backlog.self) else { return nil }
    guard let lock = RawLock() else {
        free(b)
        return nil
    }
    b.initialize(to: Backlog(items: kept, lock: lock))
    return b
}

func freeBacklog(_ b: UnsafeMutablePointer<Backlog>) {
    b.pointee.items.forEach { $0.release() }
    b.pointee.items.free()
    b.pointee.lock.destroy()
    b.deinitialize(count: 1)
    free(b)
}

/// Called by a dispatcher that found the gate shut: parks the event (retaining
/// `payload`) and returns true, or returns false when the gate opened meanwhile.
func backlogAppend(_ backlog: UnsafeMutablePointer<Backlog>, _ payload: UnsafeMutablePointer<Payload>) -> Bool {
    backlog.pointee.lock.lock()
    defer { backlog.pointee.lock.unlock() }
    if qtshim_atomic_load_u32(backlog.field(&backlog.pointee.gateOpen)) != 0 { return false }
    payload.retain()
    // The dispatch is under way: an event it parks must not be lost.
    backlog.pointee.items.append(payload)
    return true
}
