// SPDX-License-Identifier: MIT
// Waiting for a bus's queued work: C's qtbus_bus_wait_idle, for Swift.
import CQtbusShims
import Dispatch
import QTBusEngine

extension QTEventBus {
    /// Waits until no delivery of this bus is waiting or running on any queue, or until
    /// `timeout` passed: true when the bus went idle, false when the time ran out first.
    ///
    /// What it waits for is what C's `qtbus_bus_wait_idle` waits for: every queued
    /// delivery of the bus from its dispatch until its handler returned (``QTEventSubscriberMaker/atQueue(_:)``
    /// hops and C queues alike, buffered or not, replays included) and every dispatch
    /// posted with ``dispatchOnBusQueue(_:sticky:)`` or ``dispatchOnMain(_:sticky:)``.
    /// Work dispatched meanwhile counts too. Main-queue work runs only when the main
    /// queue does: in a Swift program, while the main actor is free. Tests of queued
    /// code wait with this rather than sleep.
    ///
    /// The wait sleeps on a thread of its own (a futex in the engine), not on the task's:
    /// the cooperative pool keeps running, so handlers that hop to an actor can finish.
    /// A bus being destroyed is never idle: false.
    public func waitUntilIdle(timeout: Duration) async -> Bool {
        let (seconds, attoseconds) = timeout.components
        let ms =
            seconds < 0
            ? 0
            : seconds >= Int64(Int32.max / 1000)
                ? Int32.max
                : Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        return await withCheckedContinuation { continuation in
            // A queue of its own: libdispatch gives a created serial queue a thread as
            // needed (overcommit), so a long wait never holds a worker others need.
            DispatchQueue(label: "qtbus.waitUntilIdle").async { [self] in
                continuation.resume(returning: _qtbus_bus_wait_idle(raw, ms) == QTBUS_OK.rawValue)
            }
        }
    }
}
