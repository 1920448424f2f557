// SPDX-License-Identifier: MIT
// Epoch-based reclamation: how the dispatch path reads the store without a lock and
// without writing memory another thread writes, and how "release runs once the
// dispatches in progress have returned" (lifetime rule 1) is implemented.
//
// Two kinds of read-side section, because rule 1 lets only dispatches delay a release:
//   dispatch sections (withEpoch): a dispatch, and whatever runs handlers (a replay, a
//     command's publications).  Everything retired waits for them.
//   memory sections (withMemoryEpoch): the other calls that hold an engine pointer
//     outside the registry lock (a bus being counted, cleared, destroyed or posted to; a
//     source's start and stop; a command's execute).  Only memory waits for them (a
//     table, a subtype entry, a bus: `retireMemory`); a subscription's or a command's
//     release (`retire`) never does, and their exits never run one.
//
// Every thread that enters the engine owns a ThreadRecord on its own cache line.
//   enter (outermost call on this thread): record.epoch = global epoch  (seq_cst xchg)
//   exit  (outermost):                     record.epoch = 0             (release store)
// Nothing else is written on the read path, so two threads dispatching the same type
// touch no common cache line for writing (GLib and Boost.Signals2 take a lock or bump a
// reference count there, which is why they get slower with a second thread).
//
// A writer that unlinks something (a subscription, a subtype entry, a table, a bus)
// under the registry lock then calls `retire`:
//   pending += 1; e = global epoch; global epoch += 1
//   if no record holds an epoch in 1...e, no dispatch that could still see the object
//   is running: pending -= 1 and finalize it now, before the disposing call returns;
//   otherwise keep (e, object) on the retired list, and finalize what has become free.
// Each outermost exit that sees pending != 0 runs `reclaim`, which finalizes every
// retired object older than the oldest epoch still held, so the last of the dispatches
// that were in progress finalizes the object, on its own thread.
//
// Why nothing is freed early: the xchg on entry and the epoch bump in `retire` are
// sequentially consistent, so either the scan sees the record (and waits for it) or the
// dispatcher's later loads see the unlink; the exit store is a release, so a scan that
// sees 0 also sees every load the dispatch made finished.
// Why nothing is kept forever: an exit's plain store can sit in its CPU's store buffer
// while its load of `pending` runs ahead.  A fence on every exit would close that (at
// a cost on every dispatch: bench-c's "dispatch, 0 handlers" row); instead the writer,
// in the rare case where it defers because ANOTHER thread is mid-dispatch, calls
// membarrier(PRIVATE_EXPEDITED), which makes every running thread execute a full
// barrier: afterwards each exit either is visible to the writer's own reclaim or will
// load the raised `pending`.  Where membarrier is unavailable, exits use the xchg
// instead.
import CQtbusShims
import CQtbusLibc

/// One thread's announcement of the epoch it entered in; 0 when outside the engine.
/// Allocated on its own 128-byte line (two 64-byte lines: adjacent-line prefetch).
struct ThreadRecord {
    /// Nesting of engine calls on this thread; only the owning thread touches it.
    /// First, so ThreadSanitizer's base-address reports land on an unshared field.
    var depth: Int = 0
    /// The epoch of the outermost dispatch section running on this thread (0: none).
    var epoch: UInt64 = 0
    /// Guarded by the reclaimer's lock: whether a live thread owns the record.
    var inUse = false
    /// Records are never freed, only reused, so the scan can walk this list lock-free.
    var next: UnsafeMutableRawPointer? = nil
    /// The same pair for memory sections; only the owning thread touches the depth.
    var memoryDepth: Int = 0
    var memoryEpoch: UInt64 = 0
    /// Where the outermost dispatch section and the outermost memory section keep their
    /// canary (`withEscapeCanary`, EscapeRepair.swift): how a callback that left without
    /// returning is noticed.  Read only while the section is open; only the owning
    /// thread touches them.
    var canary: UnsafeMutableRawPointer? = nil
    var memoryCanary: UnsafeMutableRawPointer? = nil
    /// The type qtbus_dispatch last resolved on this thread by name (LastTypeByName.swift,
    /// `dispatchNamed`): the caller's name pointer, the bus's serial, and the bus's type
    /// entry (a Store type named down here: scripts/layers.py, TYPES).  A hint only: a
    /// hit is confirmed by comparing the name's bytes.  Only the owning thread touches them.
    var lastByNameText: UnsafeRawPointer? = nil
    var lastByNameBusSerial: UInt32 = 0
    var lastByNameType: UnsafeMutablePointer<TypeEntry>? = nil
    /// The headers of the innermost event this thread is handling (Headers.swift; nil:
    /// none, or no event): a dispatch made here inherits their inheritable block, and
    /// the Swift API reads them (`_qtEngineCurrentHeaders`).  Set around a walk or a
    /// delivery whose event's differ (`handlingEvent`); only the owning thread touches it.
    var handling: UnsafeMutablePointer<HeaderBlock>? = nil
}

/// Runs `body` (which calls handlers with an event whose headers are `headers`) with
/// the thread's context set to them, then puts the outer context back.  One load and a
/// test when they are already the context (no headers anywhere: nil and nil).
@inline(__always)
func handlingEvent<R>(
    _ record: UnsafeMutablePointer<ThreadRecord>, _ headers: UnsafeMutablePointer<HeaderBlock>?, _ body: () -> R
) -> R {
    let inner = headers
    let outer = record.pointee.handling
    if inner == outer { return body() }
    record.pointee.handling = inner
    let result = body()
    record.pointee.handling = outer
    return result
}

/// `handlingEvent` on the calling thread's record.
@inline(__always)
func handlingEvent<R>(_ headers: UnsafeMutablePointer<HeaderBlock>?, _ body: () -> R) -> R {
    handlingEvent(currentRecord(), headers, body)
}

typealias Finalizer = @convention(c) (UnsafeMutableRawPointer?) -> Void

private struct Retired {
    let epoch: UInt64
    let object: UnsafeMutableRawPointer
    let finalize: Finalizer
    /// Memory only (`retireMemory`): waits for memory sections too, and may be finalized
    /// at their exits.  Otherwise a release, which waits for dispatch sections only.
    let memoryOnly: Bool
}

/// Guarded by the reclaimer's lock: what waits for a grace period.
nonisolated(unsafe) private var retired = Vector<Retired>()

/// The reclaimer: its state (`retired`, its lock word and the head of the record list,
/// qtbus_shims.h) is in static storage, so the first call of a process, which reaches
/// it, allocates nothing here.  (A class instance holding a malloc'd lock word and list
/// head was three allocations on that call whose failure ended the process.)
struct Reclaimer {
    // `retired` and the records' `inUse` are guarded by `lock`; the record list head is
    // published with release stores and read with acquire loads.
    @inline(__always) private var lock: RawLock { RawLock(static: qtshim_reclaimer_lock()) }
    @inline(__always) private var head: UnsafeMutablePointer<UnsafeMutableRawPointer?> { qtshim_thread_records() }

    /// The calling thread's record, made on its first call into the engine.
    func registerThread() -> UnsafeMutablePointer<ThreadRecord> {
        let record: UnsafeMutablePointer<ThreadRecord> = lock.withLock {
            var cursor = qtshim_atomic_load_ptr(head)
            while let raw = cursor {
                let r = raw.assumingMemoryBound(to: ThreadRecord.self)
                if !r.pointee.inUse {
                    r.pointee.inUse = true
                    return r
                }
                cursor = qtshim_atomic_load_ptr(r.field(&r.pointee.next))
            }
            // A thread's first call cannot report ENOMEM from every entry point: wait.
            func attempt() -> UnsafeMutableRawPointer? {
                var raw: UnsafeMutableRawPointer? = nil
                return posix_memalign(&raw, 128, 128) == 0 ? raw : nil
            }
            assert(MemoryLayout<ThreadRecord>.size <= 128)
            let raw = attempt() ?? waitForMemory(attempt)
            let r = raw.bindMemory(to: ThreadRecord.self, capacity: 1)
            r.initialize(to: ThreadRecord(inUse: true, next: qtshim_atomic_load_ptr(head)))
            qtshim_atomic_store_ptr(head, raw)
            return r
        }
        qtshim_tls_set(UnsafeMutableRawPointer(record)) { raw in
            guard let raw else { return }
            reclaimer.releaseRecord(raw.assumingMemoryBound(to: ThreadRecord.self))
        }
        return record
    }

    /// A thread ending inside a section left it without returning (pthread_exit() or a
    /// cancellation in a callback): its sections end with it, or no release would run
    /// again.  The record is then clean for the next thread that takes it.
    fileprivate func releaseRecord(_ record: UnsafeMutablePointer<ThreadRecord>) {
        if record.pointee.depth != 0 || record.pointee.memoryDepth != 0 {
            closeDispatchSection(record)
            closeMemorySection(record)
            reportEscape()
        }
        lock.withLock { record.pointee.inUse = false }
    }

    /// The oldest epoch held by a dispatch section, and by any section (UInt64.max: none),
    /// and whether a thread other than the caller holds one <= e (of memory sections
    /// too when `memory`).
    private func activeEpochs(upTo e: UInt64, memory: Bool)
        -> (oldestDispatch: UInt64, oldest: UInt64, othersActive: Bool)
    {
        let me = qtshim_tls_get()
        var oldestDispatch = UInt64.max
        var oldest = UInt64.max
        var others = false
        var cursor = qtshim_atomic_load_ptr(head)
        while let raw = cursor {
            let r = raw.assumingMemoryBound(to: ThreadRecord.self)
            let epoch = qtshim_atomic_load_seqcst_u64(r.field(&r.pointee.epoch))
            if epoch != 0 {
                oldestDispatch = min(oldestDispatch, epoch)
                if epoch <= e && raw != me { others = true }
            }
            let memoryEpoch = qtshim_atomic_load_seqcst_u64(r.field(&r.pointee.memoryEpoch))
            if memoryEpoch != 0 {
                oldest = min(oldest, memoryEpoch)
                if memory && memoryEpoch <= e && raw != me { others = true }
            }
            cursor = qtshim_atomic_load_ptr(r.field(&r.pointee.next))
        }
        return (oldestDispatch, min(oldest, oldestDispatch), others)
    }

    /// Finalizes `object` once no dispatch that could still see it is running: now,
    /// on this thread, if none is; otherwise on the thread whose dispatch ends last.
    /// Memory sections do not delay it.  Call with no engine lock held (finalizers run
    /// user release hooks).
    func retire(_ object: UnsafeMutableRawPointer, _ finalize: Finalizer) {
        qtshim_pending_add(1)
        let e = qtshim_epoch_advance()
        let (oldest, _, othersActive) = activeEpochs(upTo: e, memory: false)
        if oldest > e {
            qtshim_pending_add(-1)
            qtshim_tsan_before_release_hooks()
            finalize(object)
            return
        }
        qtshim_tsan_release(object)
        lock.withLock { retired.append(Retired(epoch: e, object: object, finalize: finalize, memoryOnly: false)) }
        // See the top of this file: makes every exit that already happened visible here.
        if othersActive && qtshim_exit_unfenced_enabled() { qtshim_membarrier() }
        reclaim()
    }

    /// Like `retire`, for objects whose finalizer only frees memory (tables, subtype
    /// entries, buses): it waits for memory sections too.  Safe under the registry lock:
    /// it never runs another object's finalizer (those may be user release hooks that
    /// call back into the registry).
    /// Holding this reclaimer's lock across the scan and the append is what lets it skip
    /// the closing `reclaim`: an exit that saw `pending` raised reclaims only after the
    /// append.
    func retireMemory(_ object: UnsafeMutableRawPointer, _ finalize: Finalizer) {
        lock.lock()
        qtshim_pending_add(1)
        let e = qtshim_epoch_advance()
        var (_, oldest, othersActive) = activeEpochs(upTo: e, memory: true)
        if oldest <= e && othersActive && qtshim_exit_unfenced_enabled() {
            qtshim_membarrier()
            oldest = activeEpochs(upTo: e, memory: true).oldest
        }
        if oldest > e {
            qtshim_pending_add(-1)
            lock.unlock()
            finalize(object)
            return
        }
        qtshim_tsan_release(object)
        retired.append(Retired(epoch: e, object: object, finalize: finalize, memoryOnly: true))
        lock.unlock()
    }

    /// Finalizes what no running section can see any more; from the exit of a memory
    /// section (`memoryOnly`), only memory: a release is never run there.
    func reclaim(memoryOnly: Bool = false) {
        lock.lock()
        if retired.isEmpty {
            lock.unlock()
            return
        }
        let (oldestDispatch, oldest, _) = activeEpochs(upTo: 0, memory: true)
        var ready = Vector<Retired>()
        retired.retain { item in
            let free = item.memoryOnly ? item.epoch < oldest : !memoryOnly && item.epoch < oldestDispatch
            if free { ready.append(item) }
            return !free
        }
        qtshim_pending_add(-Int64(ready.count))
        lock.unlock()
        if !ready.isEmpty { qtshim_tsan_before_release_hooks() }
        ready.forEach {
            qtshim_tsan_acquire($0.object)
            $0.finalize($0.object)
        }
        ready.free()
    }
}

let reclaimer = Reclaimer()

/// The calling thread's record, made on its first call into the engine.
@inline(__always)
func currentRecord() -> UnsafeMutablePointer<ThreadRecord> {
    if let raw = qtshim_tls_get() { return raw.assumingMemoryBound(to: ThreadRecord.self) }
    return reclaimer.registerThread()
}

/// Leaves a dispatch section that `withEpoch` entered nested in another (depth > 1).
@inline(__always)
private func nestedEpochExit(_ record: UnsafeMutablePointer<ThreadRecord>) {
    record.pointee.depth &-= 1
    if record.pointee.depth == 0 { outermostEpochExit(record) }
}

/// Ends the outermost dispatch section of the thread (depth already 0).
@inline(__always)
private func outermostEpochExit(_ record: UnsafeMutablePointer<ThreadRecord>) {
    // One test for the usual case: the unfenced exit, and no ThreadSanitizer edge to declare.
    if !qtshim_exit_unfenced_no_tsan_enabled() {
        qtshim_tsan_handlers_returned()
        if !qtshim_exit_unfenced_enabled() {
            _ = qtshim_atomic_exchange_u64(record.field(&record.pointee.epoch), 0)
            if qtshim_pending_load() != 0 { reclaimer.reclaim() }
            return
        }
    }
    qtshim_atomic_store_u64(record.field(&record.pointee.epoch), 0)
    if qtshim_pending_load_relaxed() != 0 { reclaimer.reclaim() }
}

/// Runs `body` inside a dispatch section (see the top of this file; other calls that
/// hold engine pointers without the registry lock use `withMemoryEpoch`).  Nested calls
/// on one thread only count depth.  Written without `defer`, which the optimizer leaves
/// as a call of its own on every dispatch: `body` does not throw.  The outermost
/// section, the dispatch path's case, tests the depth once on the way in and once on
/// the way out (docs/perf-notes.md, "One test of the depth each way").
@inline(__always)
func withEpoch<R>(_ body: () -> R) -> R {
    withEpochRecord { _ in body() }
}

/// `withEpoch`, `body` given the thread's record (read once per section: where thread-locals
/// are not initial-exec, each read is a call).
@inline(__always)
func withEpochRecord<R>(_ body: (UnsafeMutablePointer<ThreadRecord>) -> R) -> R {
    let record = currentRecord()
    if record.pointee.depth != 0 {
        // Nested, or after a callback that did not return (the repair may close all).
        repairEscapedSections(record)
        if record.pointee.depth != 0 {
            record.pointee.depth &+= 1
            let result = body(record)
            nestedEpochExit(record)
            return result
        }
    }
    _ = qtshim_atomic_exchange_u64(record.field(&record.pointee.epoch), qtshim_epoch_now())
    record.pointee.depth = 1
    let result = withEscapeCanary(record.field(&record.pointee.canary), record.canaryValue) { body(record) }
    // The outermost section ends here, whatever count a callback that left an inner
    // one without returning left behind.
    if record.pointee.depth != 1 { innerSectionEscaped(record.field(&record.pointee.depth)) }
    record.pointee.depth = 0
    outermostEpochExit(record)
    return result
}

/// Runs `body` inside a memory section: what it reads of the store stays allocated, but
/// no release waits for it (see the top of this file).
@inline(__always)
func withMemoryEpoch<R>(_ body: () -> R) -> R {
    let record: UnsafeMutablePointer<ThreadRecord>
    if let raw = qtshim_tls_get() {
        record = raw.assumingMemoryBound(to: ThreadRecord.self)
    } else {
        record = reclaimer.registerThread()
    }
    if record.pointee.depth != 0 || record.pointee.memoryDepth != 0 { repairEscapedSections(record) }
    if record.pointee.memoryDepth == 0 {
        _ = qtshim_atomic_exchange_u64(record.field(&record.pointee.memoryEpoch), qtshim_epoch_now())
    }
    record.pointee.memoryDepth += 1
    defer {
        record.pointee.memoryDepth -= 1
        if record.pointee.memoryDepth == 0 {
            // Not the unfenced exit's plain store: these calls are not on the hot path.
            _ = qtshim_atomic_exchange_u64(record.field(&record.pointee.memoryEpoch), 0)
            if qtshim_pending_load() != 0 { reclaimer.reclaim(memoryOnly: true) }
        }
    }
    if record.pointee.memoryDepth == 1 {
        defer { if record.pointee.memoryDepth != 1 { innerSectionEscaped(record.field(&record.pointee.memoryDepth)) } }
        return withEscapeCanary(record.field(&record.pointee.memoryCanary), record.memoryCanaryValue, body)
    }
    return body()
}
