// SPDX-License-Identifier: MIT
// JSON events: QTEventBus's QTJsonEvent, interoperable with C's qtbus_dispatch_json.
import Foundation
import QTEventBus

/// Why a ``QTJsonEvent`` could not be made from its payload, which may come from
/// anywhere (so it is thrown, not trapped on).
public enum QTJsonEventError: Error, Equatable, Sendable {
    /// The object is not a dictionary or an array that `JSONSerialization` can write
    /// (e.g. it contains a `Date`, a NaN, or a non-string key).
    case invalidJSONObject
    /// The data is not JSON.
    case invalidJSONText
    /// Never thrown: an invalid unique id is the program's, a programmer error, and
    /// traps as every invalid name does.
    @available(*, deprecated, message: "an invalid unique id traps; check it with QTEventBus.isValidName(_:)")
    case invalidUniqueId
}

/// A JSON event, as QTEventBus's `QTJsonEvent`: type `QTEventBus.jsonTypeName`
/// (`"QTJsonEvent"`), subtype ``uniqueId``, bytes the JSON text.
///
/// It is the same event C code sends with `qtbus_dispatch_json(bus, uniqueId, text)`
/// and receives with `QTBUS_SUB_JSON(bag, uniqueId, ...)`:
///
/// ```swift
/// let event = try QTJsonEvent(uniqueId: "profile", jsonObject: ["name": "alice"])
/// bus.on(QTJsonEvent.self).ofSubType("profile").next { print($0.jsonObject) }
/// bus.dispatch(event)        // Swift and C subscribers of "profile" receive it
/// ```
///
/// Swift subscribers receive the value a Swift dispatch made (no parsing); a JSON event
/// C dispatched is parsed once per Swift subscription (JSON text that does not parse
/// is skipped, which cannot happen for text the engine validated).
///
/// `Sendable`: ``jsonObject`` is an immutable tree of Foundation values that this type
/// made itself by parsing ``data`` (never the caller's object, which may be mutable),
/// so sharing it across threads is safe.
public struct QTJsonEvent: QTBytesEvent, @unchecked Sendable, CustomStringConvertible {
    /// `"QTJsonEvent"`, the type C's JSON events have.
    public static var eventName: String { QTEventBus.jsonTypeName }

    /// The event's name: its subtype, what `ofSubType` selects on.
    public let uniqueId: String
    /// The parsed JSON: `[String: Any]` or `[Any]` for events made with
    /// ``init(uniqueId:jsonObject:)``; any JSON value for events that arrived as text.
    public let jsonObject: Any
    /// The JSON text, UTF-8.
    public let data: Data

    /// The ``uniqueId``.
    public var eventSubType: String? { uniqueId }

    /// The JSON text C subscribers receive.
    public var eventBytes: [UInt8] { [UInt8](data) }

    /// The JSON text.
    public var jsonText: String { String(decoding: data, as: UTF8.self) }

    /// `QTJsonEvent(uniqueId, text)`.
    public var description: String { "QTJsonEvent(\(uniqueId), \(jsonText))" }

    /// An event named `uniqueId` carrying `jsonObject`, a dictionary or an array of
    /// JSON-compatible values (`String`, numbers, `Bool`, `NSNull`, nested dictionaries
    /// with string keys and arrays).
    ///
    /// `uniqueId` must be a valid name (`QTEventBus.isValidName(_:)`); an invalid one
    /// is a programmer error and traps.
    ///
    /// - Throws: ``QTJsonEventError/invalidJSONObject`` for anything else (a bad object
    ///   is an error, not a crash).
    public init(uniqueId: String, jsonObject: Any) throws(QTJsonEventError) {
        _qtRequireName(uniqueId, .name, "QTJsonEvent.init(uniqueId:jsonObject:)")
        guard JSONSerialization.isValidJSONObject(jsonObject) else { throw .invalidJSONObject }
        let data: Data
        do { data = try JSONSerialization.data(withJSONObject: jsonObject) } catch { throw .invalidJSONObject }
        try self.init(checkedUniqueId: uniqueId, jsonData: data)
    }

    /// An event named `uniqueId` carrying the JSON text `jsonData` (any JSON value).
    /// An invalid `uniqueId` (`QTEventBus.isValidName(_:)`) traps.
    ///
    /// - Throws: ``QTJsonEventError/invalidJSONText`` when it is not JSON.
    public init(uniqueId: String, jsonData: Data) throws(QTJsonEventError) {
        _qtRequireName(uniqueId, .name, "QTJsonEvent.init(uniqueId:jsonData:)")
        try self.init(checkedUniqueId: uniqueId, jsonData: jsonData)
    }

    /// `init(uniqueId:jsonData:)` for a name known to be valid.
    private init(checkedUniqueId uniqueId: String, jsonData: Data) throws(QTJsonEventError) {
        guard let object = try? JSONSerialization.jsonObject(with: jsonData, options: .fragmentsAllowed) else {
            throw .invalidJSONText
        }
        self.uniqueId = uniqueId
        self.jsonObject = object
        self.data = jsonData
    }

    /// An event named `uniqueId` carrying `value` encoded as JSON (a Codable payload).
    /// An invalid `uniqueId` (`QTEventBus.isValidName(_:)`) traps.
    ///
    /// - Throws: the encoder's error.
    public init<T: Encodable>(uniqueId: String, encoding value: T, encoder: JSONEncoder = JSONEncoder()) throws {
        _qtRequireName(uniqueId, .name, "QTJsonEvent.init(uniqueId:encoding:encoder:)")
        try self.init(checkedUniqueId: uniqueId, jsonData: encoder.encode(value))
    }

    /// Decodes an event that arrived as JSON text (from C, or from
    /// `QTEventBus.dispatchJSON`); nil when the text is not JSON or has no name.
    public init?(eventBytes: UnsafeRawBufferPointer, subType: String?) {
        // The engine's subtypes are valid names.
        guard let subType, let event = try? QTJsonEvent(checkedUniqueId: subType, jsonData: Data(eventBytes)) else {
            return nil
        }
        self = event
    }

    /// The payload decoded as `T` (a Codable payload).
    public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        try decoder.decode(T.self, from: data)
    }
}
