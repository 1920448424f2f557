// SPDX-License-Identifier: MIT
// The C bridge behind a QTNATSBridge, guarded so that no call can reach it once it is
// being closed: qtbus_nats.h's "not used after it is closed" as a property of the type
// rather than a rule for its users.
//
// A pthread mutex and condition, not Synchronization.Mutex, for the reason _Locked.swift
// gives in QTEventBus (ThreadSanitizer sees pthread's edges). No user code runs under the
// lock: the C calls run between two short critical sections that count them.
import CQtbusNATS
import Glibc

/// A C pointer handed to another thread (a blocking call runs on the bridge's queue).
struct _QTNPointer: @unchecked Sendable {
    // @unchecked: the pointee is a C object whose calls are all thread-safe.
    let raw: OpaquePointer
}

final class _QTNBridgeState: @unchecked Sendable {
    // @unchecked: `bridge`, `calls` and `last` are only touched under `mutex`, which,
    // with `changed`, lives at a stable address of its own.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let changed: UnsafeMutablePointer<pthread_cond_t>
    private var bridge: OpaquePointer?
    private var calls = 0
    private var last = qtbus_nats_stats()

    init(_ bridge: OpaquePointer) {
        self.bridge = bridge
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

    /// `body(bridge)` while the bridge is open, counted so that ``take()`` waits for it to
    /// return; nil once the bridge is closed or closing.
    func using<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R? {
        pthread_mutex_lock(mutex)
        guard let bridge else {
            pthread_mutex_unlock(mutex)
            return nil
        }
        calls += 1
        pthread_mutex_unlock(mutex)
        defer {
            pthread_mutex_lock(mutex)
            calls -= 1
            if calls == 0 { pthread_cond_broadcast(changed) }
            pthread_mutex_unlock(mutex)
        }
        return try body(bridge)
    }

    /// The bridge, for closing it: no call starts after this, and the calls running have
    /// returned; nil when it was taken already. The counts it had are kept for ``stats``.
    func take() -> OpaquePointer? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        guard let taken = bridge else { return nil }
        bridge = nil
        while calls > 0 { pthread_cond_wait(changed, mutex) }
        _ = qtbus_nats_stats_get(taken, &last)
        return taken
    }

    /// The counts when the bridge was taken for closing (zero before).
    var lastStats: qtbus_nats_stats {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return last
    }
}
