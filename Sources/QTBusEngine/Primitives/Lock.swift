// SPDX-License-Identifier: MIT
// A mutex at a stable address.
//
// The lock is the shim's futex lock (qtbus_shims.h says why not pthread_mutex_t).  The engine never calls user code while holding one of these (handlers,
// release hooks and reply callbacks all run after the lock is dropped): that is what
// lets a handler call back into any entry point without deadlocking.
import CQtbusShims
import CQtbusLibc

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

    /// The lock whose word is `word`, in static storage (qtbus_shims.h: the registry's and
    /// the reclaimer's), never destroyed.  Nothing is allocated: a process's first call
    /// takes these locks, where an allocation that failed could not be reported.
    @inline(__always)
    init(static word: UnsafeMutablePointer<UInt32>) { self.word = word }

    func destroy() { free(word) }

    @inline(__always) func lock() { qtshim_lock(word) }
    @inline(__always) func unlock() { qtshim_unlock(word) }

    @inline(__always)
    func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

extension UnsafeMutablePointer {
    /// The address of a stored field of the pointee, written `p.field(&p.pointee.x)`,
    /// checked (in debug builds) to lie inside the pointee.
    ///
    /// Atomics take field addresses from here rather than from a function with an
    /// `inout` parameter (`withUnsafeMutablePointer(to: &p.pointee.x)`): under
    /// ThreadSanitizer Swift reports every `inout` argument as a write, at the struct's
    /// base and at the field, so two threads doing atomic operations on one field would
    /// be reported as racing.  `&p.pointee.x` converted to a pointer argument is not an
    /// `inout` access: it is the field's address (`p` plus a constant offset, even
    /// unoptimized), and nothing is reported.  (For the same reason each shared struct
    /// starts with a field only lock holders touch: plain field writes through
    /// `pointee`, such as `+=`, are reported at that base, where no lock-free reader
    /// looks.)  Key paths (`MemoryLayout.offset(of:)`) did this before; Embedded Swift,
    /// the C library's mode, has none.
    ///
    /// The check is the one thing a key path gave that a pointer conversion does not:
    /// `&p.pointee.x` of a computed property passes the address of a temporary, and an
    /// atomic store there would be lost without a word.
    @inline(__always)
    func field<Field>(_ address: UnsafeMutablePointer<Field>) -> UnsafeMutablePointer<Field> {
        assert(
            UnsafeRawPointer(address) >= UnsafeRawPointer(self)
                && UnsafeRawPointer(address + 1) <= UnsafeRawPointer(self + 1),
            "field(&p.pointee.x): x is not a stored field of p's pointee")
        return address
    }
}
