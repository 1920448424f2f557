// SPDX-License-Identifier: MIT
// A pthread mutex together with the state it guards, and a condition to wait on it.
//
// Not Synchronization.Mutex: on Linux that is a futex whose slow path is compiled
// without ThreadSanitizer instrumentation, so TSan cannot see the happens-before edges
// it creates and reports every state it guards as racing. pthread mutexes are
// intercepted by TSan. Only the subscribe/dispose side takes these locks, never the
// dispatch path, and user code never runs while one is held. Package-level: the NATS
// module's bridge guard (QTEventBusNATS/_BridgeState.swift) is one too.
import Glibc

package final class _QTLocked<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched under `mutex`; the mutex and the condition
    // live at a stable address of their own (pthread objects must not move), one
    // allocation for the two: each async request and command execution makes one.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    package init(_ state: State) {
        self.state = state
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: MemoryLayout<pthread_mutex_t>.stride + MemoryLayout<pthread_cond_t>.stride,
            alignment: max(MemoryLayout<pthread_mutex_t>.alignment, MemoryLayout<pthread_cond_t>.alignment))
        mutex = raw.initializeMemory(as: pthread_mutex_t.self, repeating: pthread_mutex_t(), count: 1)
        changed = (raw + MemoryLayout<pthread_mutex_t>.stride)
            .initializeMemory(as: pthread_cond_t.self, repeating: pthread_cond_t(), count: 1)
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deinitialize(count: 1)
        mutex.deinitialize(count: 1)
        UnsafeMutableRawPointer(mutex).deallocate()
    }

    package func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }

    /// `body` under the lock once `ready` holds of the state, waiting for a
    /// ``withLockNotifying(_:)`` to change it until then.
    package func withLock<R>(when ready: (State) -> Bool, _ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !ready(state) { pthread_cond_wait(changed, mutex) }
        return try body(&state)
    }

    /// `body` under the lock; then the waiters of ``withLock(when:_:)`` look again.
    package func withLockNotifying<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer {
            pthread_cond_broadcast(changed)
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }
}
