// SPDX-License-Identifier: MIT
// A mutex at a stable address, and a container whose state lives inside it.
//
// The lock is the shim's futex lock (qtbus_shims.h says why not pthread_mutex_t).  The engine never calls user code while holding one of these (handlers,
// release hooks and reply callbacks all run after the lock is dropped): that is what
// lets a handler call back into any entry point without deadlocking.
import CQtbusShims
import Glibc

struct RawLock: @unchecked Sendable {
    // Safe to share: the word is only touched by the atomics of qtshim_lock/qtshim_unlock.
    // Allocated so it never moves (a futex is an address).
    private let word: UnsafeMutablePointer<UInt32>

    /// nil when out of memory.
    init?() {
        guard let word = tryAllocate(UInt32.self) else { return nil }
        word.initialize(to: 0)
        self.word = word
    }

    func destroy() { free(word) }

    @inline(__always) func lock() { qtshim_lock(word) }
    @inline(__always) func unlock() { qtshim_unlock(word) }

    @inline(__always)
    func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// State that can only be reached while its lock is held (NIO's `withLockedValue`).
final class Locked<State>: @unchecked Sendable {
    // @unchecked: `state` is only read or written inside `withLock`, under `lock`.
    private let lock = RawLock()!
    private var state: State

    init(_ state: State) { self.state = state }

    @inline(__always)
    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}

extension UnsafeMutablePointer {
    /// The address of a stored field of the pointee, without an inout access.
    ///
    /// Atomics take field addresses from here rather than from `&p.pointee.field`:
    /// under ThreadSanitizer Swift reports every inout access through `pointee` as a
    /// write of the whole struct at its base address, so two threads doing atomic
    /// operations on one field would be reported as racing.  (For the same reason each
    /// shared struct starts with a field only lock holders touch: plain field writes
    /// under a lock are reported at that base, where no lock-free reader looks.)
    /// The offset folds to a constant in optimized builds.
    @inline(__always)
    func field<Field>(_ path: KeyPath<Pointee, Field>) -> UnsafeMutablePointer<Field> {
        (UnsafeMutableRawPointer(self) + MemoryLayout<Pointee>.offset(of: path)!)
            .assumingMemoryBound(to: Field.self)
    }
}
