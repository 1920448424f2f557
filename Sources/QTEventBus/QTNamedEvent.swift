// SPDX-License-Identifier: MIT
// Events of named (C-visible) types, as Swift receives them from `on(named:)`.
import QTBusEngine

/// An event of a named type, copied out of the engine: what C code sees as a
/// `qtbus_event` (type, subtype, bytes).
///
/// Delivered by ``QTEventBus/on(named:)`` for events dispatched by C code, by
/// ``QTEventBus/dispatch(named:subType:bytes:sticky:)`` and ``QTEventBus/dispatchJSON(name:json:)``,
/// and by typed Swift dispatches of a type whose ``QTEvent/eventName`` is this name (their
/// ``QTBytesEvent/eventBytes`` as `bytes`, empty for other types).
public struct QTNamedEvent: Sendable, Hashable, CustomStringConvertible {
    /// The type name, e.g. `"LoginEvent"` (`qtbus_event_type`).
    public let type: String
    /// The subtype, or nil for none (`qtbus_event_subtype`).
    public let subType: String?
    /// The event's bytes (`qtbus_event_data`), copied; empty when it had none.
    public let bytes: [UInt8]

    /// An event value (for tests and forwarding; dispatch it with
    /// ``QTEventBus/dispatch(named:subType:bytes:sticky:)``).
    public init(type: String, subType: String? = nil, bytes: [UInt8] = []) {
        self.type = type
        self.subType = subType
        self.bytes = bytes
    }

    /// Copies the engine event a handler received.
    init(copying event: OpaquePointer) {
        type = _qtbus_event_type(event).map { String(cString: $0) } ?? ""
        subType = _qtbus_event_subtype(event).map { String(cString: $0) }
        var size = 0
        if let data = _qtbus_event_data(event, &size), size > 0 {
            bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
        } else {
            bytes = []
        }
    }

    /// The bytes as UTF-8 text (invalid sequences repaired), e.g. the JSON text of a
    /// `"QTJsonEvent"`.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `type/subType (n bytes)`.
    public var description: String {
        "\(type)\(subType.map { "/" + $0 } ?? "") (\(bytes.count) bytes)"
    }
}
