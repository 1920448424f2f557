// SPDX-License-Identifier: MIT
// What a buffered queued subscription does when its buffer is full: C's qtbus_overflow
// for one subscription (QTEventSubscriberMaker.buffer(_:whenFull:)).
import QTBusEngine

/// What a subscription's buffer does with a delivery that finds it full
/// (``QTEventSubscriberMaker/buffer(_:whenFull:)``), the rules of C's
/// `qtbus_queue_set_limit` for one subscription.
public enum QTOverflow: Sendable, Equatable {
    /// The dispatching thread waits for room, at most `timeout` (nil: no limit), after
    /// which the delivery is dropped. A dispatch made on the subscription's own queue,
    /// or on the main thread for `.main`, is accepted beyond the capacity instead: it
    /// could never get room by waiting.
    case block(timeout: Duration?)
    /// The delivery that does not fit is dropped.
    case dropNewest
    /// The oldest waiting delivery is dropped to make room.
    case dropOldest
    /// A new delivery always replaces a waiting one with the same subtype (full or
    /// not), keeping its place; when full with nothing to replace, as ``dropOldest``.
    case latest

    /// The engine's rule of the same name (QTBusEngine's Events/Overflow.swift), which
    /// decides for a buffered subscription as for a bounded queue.
    var engineRule: Overflow {
        switch self {
        case .block: .block
        case .dropNewest: .dropNewest
        case .dropOldest: .dropOldest
        case .latest: .latest
        }
    }

    /// The rule's C name, the `function` of the DROP trace records it makes.
    var name: StaticString { engineRule.name }
}
