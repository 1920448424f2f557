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
    // live at stable addresses of their own (pthread objects must not move).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    private var state: State

    package init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        changed = .allocate(capacity: 1)
        changed.initialize(to: pthread_cond_t())
        pthread_cond_init(changed, nil)
    }

    deinit {
        pthread_cond_destroy(changed)
        changed.deinitialize(count: 1)
        changed.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
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
