// SPDX-License-Identifier: MIT
// What is subscribed on a bus: qtbus_bus_foreach for Swift.
import CQtbusShims
import QTBusEngine

/// One live subscription of a bus, as ``QTEventBus/subscriptions()`` reports it.
public struct QTSubscriptionInfo: Sendable, Equatable {
    /// The engine token (C's `qtbus_token.id`).
    public let token: UInt64
    /// The engine type name: a typed event's ``QTEvent/eventName``, or C's name.
    public let type: String
    /// The subtypes it is limited to; empty: every event of the type.
    public let subTypes: [String]
    /// Higher runs first (``QTEventSubscriberMaker/priority(_:)``).
    public let priority: Int
    /// At most one event (``QTEventSubscriberMaker/once()``).
    public let once: Bool
    /// Kept sticky events first (``QTEventSubscriberMaker/replay()``).
    public let replay: Bool
    /// Delivered on an engine queue (a C subscription's `qtbus_queue`). A Swift
    /// `atQueue` subscription hops itself, so it shows `false`.
    public let queued: Bool
    /// In a C dispose bag (`qtbus_bag`). A Swift ``QTDisposeBag`` is not one.
    public let inBag: Bool
}

extension QTEventBus {
    /// Every live subscription of this bus, Swift's and C's: type by type, and in
    /// dispatch order within a type (priority, highest first, then subscription order).
    /// A snapshot taken with no lock held while it is converted. Running out of memory
    /// for the snapshot traps, as Swift's own allocations do (the call does not throw).
    public func subscriptions() -> [QTSubscriptionInfo] {
        final class Collector {
            var infos: [QTSubscriptionInfo] = []
        }
        let collector = Collector()
        let before = QTBusError.failuresSoFar
        let status = withExtendedLifetime(collector) {
            _qtbus_bus_foreach(
                raw,
                { info, userdata in
                    let info = info.unsafelyUnwrapped.pointee
                    let collector = Unmanaged<Collector>.fromOpaque(userdata.unsafelyUnwrapped).takeUnretainedValue()
                    let subTypes = (0..<info.subtype_count).map { String(cString: info.subtypes[$0]!) }
                    collector.infos.append(
                        QTSubscriptionInfo(
                            token: info.token.id, type: String(cString: info.type), subTypes: subTypes,
                            priority: Int(info.priority), once: info.flags & UInt32(QTBUS_SUB_ONCE) != 0,
                            replay: info.flags & UInt32(QTBUS_SUB_REPLAY) != 0, queued: info.queued != 0,
                            inBag: info.in_bag != 0))
                }, Unmanaged.passUnretained(collector).toOpaque())
        }
        if status < 0 { _qtRefused("subscriptions()", status, since: before) }
        return collector.infos
    }
}
