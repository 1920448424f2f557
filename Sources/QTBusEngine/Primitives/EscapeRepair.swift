// SPDX-License-Identifier: MIT
// The escape repair: callbacks that do not return.
//
// A C++ exception or longjmp() out of a callback leaves the section it ran in open for
// ever: the thread's record keeps its epoch, and no release in the process would run
// again.  The library cannot know what the callback left half done, but it can close
// the sections that were left, at that thread's next call (or when the thread ends), and
// say so once.  The outermost section keeps a canary in its own frame: a call made
// inside it (a handler calling back) runs deeper on the stack with the canary intact;
// after an escape the frame is gone, so the call runs above it or has overwritten it.
// Above it counts only on this thread's own stack: a coroutine's stack may lie anywhere,
// and a section must never be closed while its frame is live.  A call that comes back
// deeper than the lost frame without having overwritten the canary is taken for a
// nested one; the first later call made from above the lost frame closes the sections.
import CQtbusShims
import CQtbusLibc

extension UnsafeMutablePointer where Pointee == ThreadRecord {
    /// The value a section of this record keeps in its frame: one per record and kind,
    /// so that a frame left by another thread's record or section does not match.
    @inline(__always) var canaryValue: UInt64 { 0x7142_5553_CA4A_2701 ^ UInt64(UInt(bitPattern: self)) }
    @inline(__always) var memoryCanaryValue: UInt64 { 0x6D42_5553_CA4A_2702 ^ UInt64(UInt(bitPattern: self)) }
}

/// Runs an outermost section's `body` with the canary in the caller's frame (inlined:
/// the frame of the call that opened the section, live until it returns), its address
/// in `slot`.  Two stores on the dispatch path; nothing clears the slot, which is read
/// only while the section is open.
@inline(__always)
func withEscapeCanary<R>(
    _ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ value: UInt64,
    _ body: () -> R
) -> R {
    var canary = value
    // Unprotected: a stack protector would cost the dispatch path more than the
    // canary itself, for a pointer no code writes through.
    return _withUnprotectedUnsafeMutablePointer(to: &canary) { p in
        slot.pointee = UnsafeMutableRawPointer(p)
        return body()
    }
}

/// Whether the frame holding `canary` is gone: this call runs above it on this thread's
/// stack, or something else was written there.
private func frameGone(_ canary: UnsafeMutableRawPointer, _ value: UInt64) -> Bool {
    let here = qtshim_frame()
    let address = UInt(bitPattern: canary)
    if here > address && qtshim_on_thread_stack(here) && qtshim_on_thread_stack(address) { return true }
    return here < address && qtshim_stack_peek(canary) != value
}

func closeDispatchSection(_ record: UnsafeMutablePointer<ThreadRecord>) {
    record.pointee.depth = 0
    record.pointee.canary = nil
    // An emit's frame in that dispatch is gone too: no typed handler may read it.
    qtshim_signals_forget_emits()
    _ = qtshim_atomic_exchange_u64(record.field(&record.pointee.epoch), 0)
}

func closeMemorySection(_ record: UnsafeMutablePointer<ThreadRecord>) {
    record.pointee.memoryDepth = 0
    record.pointee.memoryCanary = nil
    _ = qtshim_atomic_exchange_u64(record.field(&record.pointee.memoryEpoch), 0)
}

func reportEscape() {
    qtshim_escape_noticed(
        """
        a callback on this thread did not return normally (a C++ exception or longjmp() \
        out of a handler, release hook or other callback): the library closed the \
        dispatch it interrupted, so releases go on, but what that dispatch had not done \
        is lost (qtbus.h: CALLBACKS MUST RETURN)
        """)
}

/// Closes the sections of this thread whose frames are gone, and reports it: on the
/// thread's next call after a callback left without returning.  Not on the fast path:
/// only a call made while a section is open (a nested one, or one after an escape).
@inline(never)
func repairEscapedSections(_ record: UnsafeMutablePointer<ThreadRecord>) {
    var escaped = false
    if record.pointee.depth > 0, let canary = record.pointee.canary,
        frameGone(canary, record.canaryValue)
    {
        closeDispatchSection(record)
        escaped = true
    }
    if record.pointee.memoryDepth > 0, let canary = record.pointee.memoryCanary,
        frameGone(canary, record.memoryCanaryValue)
    {
        closeMemorySection(record)
        escaped = true
    }
    guard escaped else { return }
    reportEscape()
    // What waited for the closed sections may be freed now; this call's own section,
    // if it opens one, cannot hold it up (it takes a newer epoch).
    if qtshim_pending_load() != 0 { reclaimer.reclaim() }
}

/// An outermost section returns with a deeper count than it had: a callback left a
/// section nested in it without returning, back into a handler of this one.  The
/// count is set right as the outermost section ends.
@inline(never)
func innerSectionEscaped(_ depth: UnsafeMutablePointer<Int>) {
    depth.pointee = 1
    reportEscape()
}

/// The same repair from a C entry point that opens no section (Boundary/CEntry.swift).
@inline(__always)
func checkCallbacksReturned() {
    guard let raw = qtshim_tls_get() else { return }
    let record = raw.assumingMemoryBound(to: ThreadRecord.self)
    if record.pointee.depth != 0 || record.pointee.memoryDepth != 0 { repairEscapedSections(record) }
}
