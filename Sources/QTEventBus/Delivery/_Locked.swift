// SPDX-License-Identifier: MIT
// A pthread mutex together with the state it guards.
//
// Not Synchronization.Mutex: on Linux that is a futex whose slow path is compiled
// without ThreadSanitizer instrumentation, so TSan cannot see the happens-before edges
// it creates and reports every state it guards as racing. pthread mutexes are
// intercepted by TSan. Only the subscribe/dispose side takes these locks, never the
// dispatch path, and user code never runs while one is held.
import Glibc

final class _QTLocked<State>: @unchecked Sendable {
    // @unchecked: `state` is only touched inside `withLock`, under `mutex`, which lives
    // at a stable address of its own (a pthread_mutex_t must not move).
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
