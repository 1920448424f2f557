// SPDX-License-Identifier: MIT
// The C bridge behind a QTNATSBridge, guarded so that no call can reach it once it is
// being closed: qtbus_nats.h's "not used after it is closed" as a property of the type
// rather than a rule for its users.
//
// QTEventBus's _QTLocked (a pthread mutex and condition, for the reason _Locked.swift
// gives). No user code runs under the lock: the C calls run between two short critical
// sections that count them.
import CQtbusNATS
import QTEventBus

/// A C pointer handed to another thread (a blocking call runs on the bridge's queue).
struct _QTNPointer: @unchecked Sendable {
    // @unchecked: the pointee is a C object whose calls are all thread-safe.
    let raw: OpaquePointer
}

final class _QTNBridgeState: Sendable {
    private struct State {
        var bridge: OpaquePointer?
        /// Calls running on the bridge.
        var calls = 0
        var last = qtbus_nats_stats()
    }
    private let locked: _QTLocked<State>

    init(_ bridge: OpaquePointer) {
        locked = _QTLocked(State(bridge: bridge))
    }

    /// `body(bridge)` while the bridge is open, counted so that ``take()`` waits for it to
    /// return; nil once the bridge is closed or closing.
    func using<R>(_ body: (OpaquePointer) throws -> R) rethrows -> R? {
        let open = locked.withLock { state -> OpaquePointer? in
            guard let bridge = state.bridge else { return nil }
            state.calls += 1
            return bridge
        }
        guard let bridge = open else { return nil }
        defer { locked.withLockNotifying { $0.calls -= 1 } }
        return try body(bridge)
    }

    /// The bridge, for closing it: no call starts after this, and the calls running have
    /// returned; nil when it was taken already. The counts it had are kept for ``stats``.
    func take() -> OpaquePointer? {
        let open = locked.withLock { state -> OpaquePointer? in
            defer { state.bridge = nil }
            return state.bridge
        }
        guard let taken = open else { return nil }
        // No call starts once `bridge` is nil: wait for those that started.
        locked.withLock(when: { $0.calls == 0 }) { state in _ = qtbus_nats_stats_get(taken, &state.last) }
        return taken
    }

    /// The counts when the bridge was taken for closing (zero before).
    var lastStats: qtbus_nats_stats {
        locked.withLock { $0.last }
    }
}
