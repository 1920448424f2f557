// SPDX-License-Identifier: MIT
// Values that cross to C as bytes: replies, command inputs and command values.
//
// Requests, replies and command events are bytes in the C ABI (qtbus_event_reply,
// qtbus_execution_send), so that a C program and Swift code in one process answer each
// other. A typed Swift value therefore needs one agreed encoding; this protocol is it.
// The core conforms only the two types whose encoding is obvious to a C reader (text as
// its UTF-8 bytes, bytes as themselves); QTEventBusFoundation adds Codable values as
// JSON, since encoding JSON needs Foundation.

/// A value that travels as bytes: a request's reply, a ``QTCommand``'s input or output.
///
/// ```swift
/// struct Score: QTBytesConvertible {
///     let points: UInt8
///     var qtBytes: [UInt8] { [points] }
///     init?(qtBytes: UnsafeRawBufferPointer) {
///         guard qtBytes.count == 1 else { return nil }
///         points = qtBytes[0]
///     }
/// }
/// ```
///
/// The bytes are what C code reads (`qtbus_event_data`, NUL-terminated, the NUL not
/// counted); keep them simple if C reads them.
public protocol QTBytesConvertible: Sendable {
    /// The value's bytes.
    var qtBytes: [UInt8] { get }

    /// Decodes bytes (valid only during the call), or nil when they are not a value of
    /// this type (the value is then skipped).
    init?(qtBytes: UnsafeRawBufferPointer)
}

/// Text as its UTF-8 bytes, the way C code writes a reply such as `"login ok"`.
/// Decoding repairs invalid UTF-8 rather than failing, as `String(decoding:as:)` does.
extension String: QTBytesConvertible {
    public var qtBytes: [UInt8] { Array(utf8) }

    public init?(qtBytes: UnsafeRawBufferPointer) {
        self = String(decoding: qtBytes, as: UTF8.self)
    }
}

/// Bytes as themselves.
extension Array: QTBytesConvertible where Element == UInt8 {
    public var qtBytes: [UInt8] { self }

    public init?(qtBytes: UnsafeRawBufferPointer) {
        self = Array(qtBytes)
    }
}
