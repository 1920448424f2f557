// SPDX-License-Identifier: MIT
// The overflow rules of a bounded queue (qtbus_overflow, qtbus_queue_set_limit), written
// once for the two places that keep a bound: the engine's bounded queues
// (BoundedQueue.swift, `decide`) and the Swift API's buffered subscriptions
// (QTEventBus's Delivery/_HopBuffer.swift, `offer`), which bound a DispatchQueue the
// engine does not own.  Each asks these in the same order and applies the answer to its
// own store of waiting deliveries (a ring of slots; an array):
//   1. `replacesSameKey`: the new delivery takes the place of a waiting one of the
//      same key, full or not;
//   2. otherwise, with room (fewer deliveries waiting than the capacity, and no
//      dispatcher waiting in line for room before it), it is accepted;
//   3. otherwise `whenFull` says what happens.
// What counts as waiting, and how a dispatcher waits in line, are each side's own.

/// qtbus_overflow.
package enum Overflow: UInt32 {
    case grow = 0
    case block, dropNewest, dropOldest, latest

    /// The `function` of the DROP records this rule makes.
    package var name: StaticString {
        switch self {
        case .grow: "QTBUS_OVERFLOW_GROW"
        case .block: "QTBUS_OVERFLOW_BLOCK"
        case .dropNewest: "QTBUS_OVERFLOW_DROP_NEWEST"
        case .dropOldest: "QTBUS_OVERFLOW_DROP_OLDEST"
        case .latest: "QTBUS_OVERFLOW_LATEST"
        }
    }

    /// What a full queue does with one more delivery.
    package enum WhenFull {
        /// It is accepted beyond the capacity.
        case accept
        /// It is dropped.
        case dropOffered
        /// The oldest waiting delivery is dropped, and it is accepted.
        case dropOldest
        /// The dispatcher waits in line for room: then it is accepted, or dropped when
        /// the wait ends without room.
        case waitForRoom
    }

    /// Whether a delivery replaces a waiting one of the same key (subscription, type
    /// and subtype), in its place, full or not.
    package var replacesSameKey: Bool { self == .latest }

    /// What a full queue does with one more delivery.  `mayWait` is asked of BLOCK
    /// only: false when the dispatch runs on the queue itself, or on the main thread
    /// for the main queue, where waiting would wait for itself; it is accepted then.
    @inline(__always)
    package func whenFull(mayWait: @autoclosure () -> Bool) -> WhenFull {
        switch self {
        case .grow: .accept
        case .dropNewest: .dropOffered
        case .dropOldest, .latest: .dropOldest  // LATEST here has nothing to replace
        case .block: mayWait() ? .waitForRoom : .accept
        }
    }
}
