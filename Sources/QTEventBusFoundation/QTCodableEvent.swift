// SPDX-License-Identifier: MIT
// Codable events: typed Swift events whose bytes are their JSON encoding.
import Foundation
import QTEventBus

/// A typed event that crosses to C and back as JSON: its `QTBytesEvent.eventBytes`
/// are its `JSONEncoder` encoding, and an event of its type that arrives as bytes (C
/// dispatched it) is decoded with `JSONDecoder`.
///
/// ```swift
/// struct Download: QTCodableEvent {
///     static var eventName: String { "DownloadEvent" }   // the name C uses
///     let songId: String
///     let progress: Double
///     var eventSubType: String? { songId }
/// }
/// bus.dispatch(Download(songId: "42", progress: 0.5))
/// // C: qtbus_event_data(...) == {"songId":"42","progress":0.5}
/// ```
///
/// Swift subscribers of a Swift dispatch receive the value itself (no encoding or
/// decoding on that path; the encoding is made once per dispatch for C readers).
/// A value that fails to encode travels with empty bytes; bytes that fail to decode
/// are skipped.
public protocol QTCodableEvent: QTBytesEvent, Codable {}

extension QTCodableEvent {
    /// The JSON encoding (empty if encoding fails).
    public var eventBytes: [UInt8] {
        (try? [UInt8](JSONEncoder().encode(self))) ?? []
    }

    /// Decodes the JSON encoding; nil when it does not decode.
    public init?(eventBytes: UnsafeRawBufferPointer, subType: String?) {
        guard let value = try? JSONDecoder().decode(Self.self, from: Data(eventBytes)) else { return nil }
        self = value
    }
}

extension QTEventBus {
    /// Dispatches `value`, JSON-encoded, as the JSON event `name` (what C's
    /// `QTBUS_SUB_JSON(bag, name, ...)` and Swift's
    /// `on(QTJsonEvent.self).ofSubType(name)` receive).
    ///
    /// An invalid `name` (``QTEventBus/isValidName(_:)``) is a programmer error and traps.
    ///
    /// - Returns: as ``QTEventBus/dispatch(_:sticky:)``: a count, never a refusal.
    /// - Throws: the encoder's error.
    @discardableResult
    public func dispatchJSON<T: Encodable>(name: String, encoding value: T, encoder: JSONEncoder = JSONEncoder()) throws
        -> Int
    {
        _qtRequireName(name, .name, "dispatchJSON(name:encoding:encoder:)")
        return dispatch(try QTJsonEvent(uniqueId: name, encoding: value, encoder: encoder))
    }
}

/// A reply, command input or command value that crosses to C and back as JSON, the way
/// ``QTCodableEvent`` does for events: declare the conformance and the bytes are the
/// `JSONEncoder` encoding.
///
/// ```swift
/// struct Session: QTCodableBytes { let user: String; let expires: Int }
/// bus.on(Login.self).reply { login in [Session(user: login.account, expires: 3600)] }
/// let sessions = try await bus.request(Login(account: "alice"), replyAs: Session.self)
/// // a C sender's on_reply reads {"user":"alice","expires":3600}
/// ```
///
/// A value that fails to encode travels as empty bytes; bytes that fail to decode are
/// skipped (see `QTBytesConvertible`).
public protocol QTCodableBytes: QTBytesConvertible, Codable {}

extension QTCodableBytes {
    public var qtBytes: [UInt8] {
        (try? [UInt8](JSONEncoder().encode(self))) ?? []
    }

    public init?(qtBytes: UnsafeRawBufferPointer) {
        guard let value = try? JSONDecoder().decode(Self.self, from: Data(qtBytes)) else { return nil }
        self = value
    }
}
