// SPDX-License-Identifier: MIT
// The QTEventBus tests' own helpers: the event types they use, the main queue pump
// (MainThreadTests), and queue and thread helpers.  Counters, recorders, locked values
// and bounded waits are QTEventBusTestSupport's, shared with the other test targets.
import Dispatch
import Foundation
import Glibc
import QTBusEngine
import QTEventBus
import QTEventBusTestSupport

// MARK: - Events

/// QTEventBus's demo event: a login, subtype = the user.
struct LoginEvent: QTEvent, Equatable {
    let userId: String
    var eventSubType: String? { userId }
}

/// A typed event without a subtype.
struct PingEvent: QTEvent, Equatable {
    let n: Int
}

/// A generic event: `GenericEvent<Int>` and `GenericEvent<String>` are different types.
struct GenericEvent<T: Sendable & Equatable>: QTEvent, Equatable {
    let value: T
}

/// An event C code can read and send: its type name is "CLoginEvent", its bytes the
/// user id.
struct CLoginEvent: QTBytesEvent, Equatable {
    static var eventName: String { "CLoginEvent" }
    let userId: String
    var eventSubType: String? { userId }
    var eventBytes: [UInt8] { Array(userId.utf8) }
    init(userId: String) { self.userId = userId }
    init?(eventBytes: UnsafeRawBufferPointer, subType: String?) {
        userId = String(decoding: eventBytes, as: UTF8.self)
    }
}

/// Holds nothing; tests watch its lifetime with `weak` references.
final class Token: Sendable {}

/// A freeWith owner.
final class Owner {}

// MARK: - Waiting

/// Runs the main queue (DispatchQueue.main == qtbus_queue_main()) on this, the main,
/// thread until `condition` holds or `seconds` pass, as a C program's loop would with
/// qtbus_main_wait.
@discardableResult
func drainMain(_ seconds: Double = 5, until condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while !condition() {
        if monotonicSeconds() > deadline { return false }
        _ = _qtbus_main_wait(10)
    }
    return true
}

/// Whether this is the process's main thread (the one XCTest runs tests on: see
/// MainThreadTests.swift).
func isMainThread() -> Bool { Thread.isMainThread }

/// Waits until every block queued so far on `queue` has run.
func flush(_ queue: DispatchQueue) {
    queue.sync {}
}

/// Runs `body(i)` for i in 0..<count on `count` threads started together.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: count) { body($0) }
}
