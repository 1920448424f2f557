// A mutex at a stable address, and a container whose state lives inside it.
//
// pthread_mutex_t must not move once initialised, so it is allocated, never a stored
// struct.  The engine never calls user code while holding one of these (handlers,
// release hooks and reply callbacks all run after the lock is dropped): that is what
// lets a handler call back into any entry point without deadlocking.
import Glibc

struct RawLock: @unchecked Sendable {
    // Safe to share: the pointee is only ever touched through pthread calls.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    func destroy() {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always) func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) func unlock() { pthread_mutex_unlock(mutex) }

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
    private let lock = RawLock()
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
