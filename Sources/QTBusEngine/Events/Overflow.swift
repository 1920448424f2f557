// SPDX-License-Identifier: MIT
// The overflow rules of a bounded queue (qtbus_overflow, qtbus_queue_set_limit).

/// qtbus_overflow.
enum Overflow: UInt32 {
    case grow = 0, block, dropNewest, dropOldest, latest

    /// The `function` of the DROP records this rule makes.
    var name: StaticString {
        switch self {
        case .grow: "QTBUS_OVERFLOW_GROW"
        case .block: "QTBUS_OVERFLOW_BLOCK"
        case .dropNewest: "QTBUS_OVERFLOW_DROP_NEWEST"
        case .dropOldest: "QTBUS_OVERFLOW_DROP_OLDEST"
        case .latest: "QTBUS_OVERFLOW_LATEST"
        }
    }
}
