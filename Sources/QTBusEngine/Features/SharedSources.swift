// SPDX-License-Identifier: MIT
// Shared sources (ReactiveCocoa's RACMulticastConnection): one start/stop pair per
// connection, however many subscribers the source's events have.
//
// Connected-ness is reconciled, not toggled: a call records what it wants
// (`want`, under the registry lock) and, if nobody is running start or stop for the
// source at that moment, becomes its worker (`busy`) and runs start or stop until what
// was done (`have`) matches what is wanted.  So start and stop strictly alternate and
// never overlap, no user code runs under the lock, and a start function that
// disconnects its own source (re-entrant, same thread) only records the wish: the loop
// up its stack runs stop once start has returned.  Normally the caller is the worker,
// so start runs inside the call that connects, as the contract says; when another
// thread is mid-start or mid-stop, that thread runs it for us and our call returns.
//
// Autoconnect: a type entry lists its autoconnect sources; subscribe and unlink (under
// the lock) set `want` from the type's live subscription count going 1 or 0, and the
// calling entry point reconciles after unlocking (`typeLivenessChanged`).
import CQtbusShims
import CQtbusLibc

struct SharedSource {
    /// Under the registry lock, as every field but the constants (first: see `field(_:)`).
    var want = false
    var have = false
    var busy = false
    var disposed = false
    let id: UInt64
    let bus: UnsafeMutablePointer<Bus>
    let type: UnsafeMutablePointer<TypeEntry>
    let autoconnect: Bool
    let start: qtbus_source_start
    let stop: qtbus_source_stop?
    let userdata: UnsafeMutableRawPointer?
    let release: qtbus_release?
}

private enum ReconcileStep { case start, stop, finished, finalize }

extension UnsafeMutablePointer where Pointee == SharedSource {
    /// Under the registry lock, after `want` changed: true when the caller must run
    /// `reconcile` after unlocking.
    func claimWorker() -> Bool {
        guard !pointee.busy, pointee.have != pointee.want || pointee.disposed else { return false }
        pointee.busy = true
        return true
    }

    /// Outside the lock, inside an epoch, as the source's worker.
    func reconcile() {
        while true {
            let step: ReconcileStep = withRegistry { _, _ in
                if pointee.have == pointee.want {
                    pointee.busy = false
                    return pointee.disposed ? .finalize : .finished
                }
                pointee.have = pointee.want
                return pointee.have ? .start : .stop
            }
            switch step {
            case .start: pointee.start(OpaquePointer(pointee.bus), pointee.userdata)
            case .stop: pointee.stop?(pointee.userdata)
            case .finished: return
            case .finalize:
                // Disposed and idle: nobody else holds the pointer (lookups fail, and
                // only a worker keeps it past the lock).
                let release = pointee.release
                let userdata = pointee.userdata
                deinitialize(count: 1)
                free(self)
                release?(userdata)
                return
            }
        }
    }
}

/// Under the registry lock, after `want` changed: when this caller became the worker,
/// it reconciles after the unlock.
private func claimWorker(_ s: UnsafeMutablePointer<SharedSource>, _ after: inout AfterUnlock) {
    if s.claimWorker() { after.call(reconcileSource, UnsafeMutableRawPointer(s)) }
}

private let reconcileSource: Finalizer = { raw in
    // A memory section: start and stop are not dispatches (rule 1); their bus stays.
    withMemoryEpoch { raw!.assumingMemoryBound(to: SharedSource.self).reconcile() }
}

/// Under the registry lock: the type's live subscription count went from 0 to 1
/// (`live: true`) or from 1 to 0; its autoconnect sources follow, after the unlock.
/// The one call from registry changes up into a feature: autoconnect is what a type
/// coming alive or going idle means.
func typeLivenessChanged(_ type: UnsafeMutablePointer<TypeEntry>, live: Bool, _ after: inout AfterUnlock) {
    type.pointee.sources.forEach { s in
        s.pointee.want = live
        claimWorker(s, &after)
    }
}

func makeSource(
    _ bus: UnsafeMutablePointer<Bus>, _ type: CName, autoconnect: Bool, _ start: qtbus_source_start,
    _ stop: qtbus_source_stop?, _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?
) -> Int64 {
    withMemoryEpoch {
        withRegistry { state, after in
            if isClosed(bus) { return Int64(failClosed()) }
            guard let entry = typeEntry(bus, type), bus.pointee.sources.reserve(1),
                !autoconnect || entry.pointee.sources.reserve(1),
                let s = tryAllocate(SharedSource.self)
            else { return Int64(QTBUS_ENOMEM.rawValue) }
            let id = state.sources.insert(s)
            guard id != 0 else {
                free(s)
                return Int64(QTBUS_ENOMEM.rawValue)
            }
            s.initialize(
                to: SharedSource(
                    id: id, bus: bus, type: entry, autoconnect: autoconnect, start: start,
                    stop: stop, userdata: userdata, release: release))
            bus.pointee.sources.appendReserved(id)
            if autoconnect {
                entry.pointee.sources.appendReserved(s)
                // Subscribers already there: connect now.
                if entry.pointee.liveCount > 0 {
                    s.pointee.want = true
                    claimWorker(s, &after)
                }
            }
            return Int64(bitPattern: id)
        }
    }
}

/// connect (`want: true`) or disconnect: when this call becomes the source's worker, it
/// runs start or stop after unlocking.
func setSourceConnected(_ id: UInt64, _ want: Bool) -> Int32 {
    withRegistry { state, after in
        guard let s = state.sources.lookup(id) else {
            return fail(QTBUS_ESTALE, "the source is disposed or was never made")
        }
        s.pointee.want = want
        claimWorker(s, &after)
        return QTBUS_OK.rawValue
    }
}

/// Under the registry lock: takes the source out of every list and marks it to be
/// stopped (if connected) and released by a worker: this call, after the unlock, or
/// the busy worker, which finishes the job.
func disposeSourceLocked(
    _ state: inout RegistryState, _ s: UnsafeMutablePointer<SharedSource>,
    _ after: inout AfterUnlock
) {
    state.sources.remove(s.pointee.id)
    let bus = s.pointee.bus
    bus.pointee.sources.removeFirst { $0 == s.pointee.id }
    s.pointee.type.pointee.sources.removeFirst { $0 == s }
    s.pointee.disposed = true
    s.pointee.want = false
    claimWorker(s, &after)
}

func disposeSource(_ id: UInt64) -> Int32 {
    withRegistry { state, after in
        guard let s = state.sources.lookup(id) else {
            return fail(QTBUS_ESTALE, "the source is disposed or was never made")
        }
        disposeSourceLocked(&state, s, &after)
        return QTBUS_OK.rawValue
    }
}
