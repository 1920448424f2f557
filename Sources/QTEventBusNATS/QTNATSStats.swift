// SPDX-License-Identifier: MIT
// A bridge's counts: C's qtbus_nats_stats, for Swift.
import CQtbusNATS

/// What a ``QTNATSBridge`` has done since it was made (C's `qtbus_nats_stats`): every
/// count only grows, but ``pending``.
///
/// `received == dispatched + dropped on receipt + pending`.
public struct QTNATSStats: Sendable, Hashable, CustomStringConvertible {
    /// Events and requests published by the bridge's exports.
    public var published: UInt64
    /// Events and requests its imports received (one that two imports take counts once).
    public var received: UInt64
    /// Every event the bridge reported and did not deliver, either way: a publish that
    /// failed, a received message it could not dispatch.
    public var dropped: UInt64
    /// The connection's reconnects.
    public var reconnects: UInt64
    /// Received messages not yet dispatched by the bridge's thread: compare with
    /// ``QTNATSBridge/maxPending`` to see a slow consumer coming.
    public var pending: UInt64

    public init(
        published: UInt64 = 0, received: UInt64 = 0, dropped: UInt64 = 0, reconnects: UInt64 = 0,
        pending: UInt64 = 0
    ) {
        self.published = published
        self.received = received
        self.dropped = dropped
        self.reconnects = reconnects
        self.pending = pending
    }

    init(_ stats: qtbus_nats_stats) {
        self.init(
            published: stats.published, received: stats.received, dropped: stats.dropped,
            reconnects: stats.reconnects, pending: stats.pending)
    }

    /// `published 3, received 2, dropped 0, reconnects 0, pending 0`.
    public var description: String {
        "published \(published), received \(received), dropped \(dropped), reconnects \(reconnects), pending \(pending)"
    }
}
