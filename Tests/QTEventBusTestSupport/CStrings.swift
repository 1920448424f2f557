// SPDX-License-Identifier: MIT
// Reading what the C peer (Tests/QTEventBusCTestSupport/cpeer.c) recorded; shared by
// the QTEventBus and QTEventBusFoundation tests.
import QTEventBusCTestSupport

/// What C slot `slot` last received.
public struct CReceived {
    public let slot: Int32

    public init(slot: Int32) { self.slot = slot }

    public var count: Int { Int(cpeer_count(slot)) }

    public var data: String {
        var buffer = [CChar](repeating: 0, count: 1024)
        _ = cpeer_last_data(slot, &buffer, buffer.count)
        return text(buffer)
    }

    public var size: Int {
        var buffer = [CChar](repeating: 0, count: 8)
        return cpeer_last_data(slot, &buffer, buffer.count)
    }

    public var type: String {
        var buffer = [CChar](repeating: 0, count: 256)
        cpeer_last_type(slot, &buffer, buffer.count)
        return text(buffer)
    }

    public var subType: String {
        var buffer = [CChar](repeating: 0, count: 256)
        cpeer_last_subtype(slot, &buffer, buffer.count)
        return text(buffer)
    }

    /// Every event's data, each followed by "|" (`"1|0|"`).
    public var history: String {
        var buffer = [CChar](repeating: 0, count: 1024)
        _ = cpeer_history(slot, &buffer, buffer.count)
        return text(buffer)
    }

    public var terminated: Bool { cpeer_last_terminated(slot) == 1 }
    public var hadObject: Bool { cpeer_last_had_object(slot) == 1 }

    public func stop() { _ = cpeer_stop(slot) }

    private func text(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What the C requester (`cpeer_request`) received: its replies, each followed by "|".
public func cRequestReplies() -> String {
    var buffer = [CChar](repeating: 0, count: 1024)
    _ = cpeer_request_replies(&buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
