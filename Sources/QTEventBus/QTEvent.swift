// SPDX-License-Identifier: MIT
// The event protocols: what a Swift value must say to travel on a bus.
//
// A typed event is keyed by an engine type name: by default its Swift type's full name
// (module, nesting and generic parameters included, so `Box<Int>` and `Box<String>` are
// two types); an event that overrides `eventName` joins that named type instead, which C
// code sees and dispatches by the same name.

/// A value that can be dispatched on a ``QTEventBus``.
///
/// Conform a struct (or an immutable final class) and dispatch it:
///
/// ```swift
/// struct LoginEvent: QTEvent {
///     let userId: String
///     var eventSubType: String? { userId }
/// }
/// bus.on(LoginEvent.self).ofSubType("alice").next { event in print(event.userId) }
/// bus.dispatch(LoginEvent(userId: "alice"))
/// ```
///
/// Events are `Sendable`: a subscriber made with
/// ``QTEventSubscriberMaker/atQueue(_:)`` receives the value on another thread.
///
/// - Type names. The engine keys subscriptions by ``eventName``. Its default is
///   `String(reflecting: Self.self)`, e.g. `"MyApp.LoginEvent"` or
///   `"MyApp.Box<Swift.Int>"`; a name longer than the engine's 255-byte limit is
///   shortened to a prefix plus a 128-bit hash of the whole name, so it stays unique.
///   The name is computed once per type, on first use, and must not change afterwards.
/// - Named (C-visible) types. Override ``eventName`` (e.g. `"LoginEvent"`) to share a
///   type with C code and with ``QTEventBus/on(named:)``. Swift subscribers of the
///   type receive the Swift value itself when Swift dispatched it; an event C
///   dispatched carries no Swift value, so it reaches typed subscribers only when the
///   type conforms to ``QTBytesEvent`` and decodes it from the bytes. C code that
///   dispatches a type a Swift event joins must leave `qtbus_event_desc.object` NULL:
///   a Swift subscriber reads a non-NULL object as the Swift value.
/// - Subtypes. ``eventSubType`` (nil by default) is the second-level key that
///   ``QTEventSubscriberMaker/ofSubType(_:)`` selects on. Engine names are 1 to 255
///   UTF-8 bytes with no NUL byte (``QTEventBus/isValidName(_:)``): dispatching an event
///   whose subtype or ``eventName`` is not one is a programmer error and traps, naming
///   the call, the name and why (see "Errors" in the overview).
public protocol QTEvent: Sendable {
    /// The engine type name of this event type. Defaults to the Swift type's full name
    /// (see ``QTEvent``); override it to join a named type C code also uses. Read once
    /// per type.
    static var eventName: String { get }

    /// The event's subtype (QTEventBus's `eventSubType`), or nil for none. A
    /// subscription without subtypes receives events with and without one.
    var eventSubType: String? { get }
}

extension QTEvent {
    /// The default type name: `String(reflecting: Self.self)`, shortened with a hash
    /// when it exceeds 255 bytes.
    public static var eventName: String { _qtDefaultEventName(Self.self) }

    /// No subtype.
    public var eventSubType: String? { nil }
}

/// An event that also travels as bytes, so C code can read it (Swift → C) and Swift
/// subscribers can receive it when C dispatched it (C → Swift).
///
/// When Swift dispatches it, ``eventBytes`` becomes the engine event's data
/// (NUL-terminated, the NUL not counted in its size) while Swift subscribers still get
/// the value itself. When an event of the type arrives without a Swift value (C
/// dispatched it, or Swift's ``QTEventBus/dispatch(named:subType:bytes:sticky:)``), a
/// typed subscriber calls ``init(eventBytes:subType:)``; events it cannot decode (nil)
/// are skipped.
public protocol QTBytesEvent: QTEvent {
    /// The bytes C code receives as `qtbus_event_data`.
    var eventBytes: [UInt8] { get }

    /// Decodes an event that arrived as bytes (valid only during the call), or nil to
    /// skip it. `subType` is the event's subtype.
    init?(eventBytes: UnsafeRawBufferPointer, subType: String?)
}

/// An event type fed by an outside source while anyone subscribes to it, such as
/// `Notification` bridged from `NotificationCenter` by `QTEventBusFoundation`.
///
/// ``startSource(on:subTypes:)`` runs inside every subscribe call for the type,
/// before the subscription exists; the closure it returns runs once, after the
/// subscription's last delivery (from its release hook: token, bag, ONCE, `freeWith`
/// or the bus going away), or at once if the subscribe fails. Reference-count the
/// source behind them to start it with the first subscriber and stop it with the last.
public protocol QTSourcedEvent: QTEvent {
    /// Called when a subscription of this type is being made on `bus` for `subTypes`
    /// (empty: the whole type). Returns what ends this subscription's claim, or nil.
    static func startSource(on bus: QTEventBus, subTypes: [String]) -> (@Sendable () -> Void)?
}

/// A string is an event whose subtype is the string itself, as `NSString` is in
/// QTEventBus: `bus.dispatch("refresh")` reaches
/// `bus.on(String.self).ofSubType("refresh")`. Its type name is `"Swift.String"`, and,
/// as any subtype, it must be a valid name (``QTEventBus/isValidName(_:)``): dispatching
/// `""` traps.
extension String: QTEvent {
    /// The string itself.
    public var eventSubType: String? { self }
}

/// The default ``QTEvent/eventName``: the reflecting name, or a prefix and a 128-bit
/// hash of it when it is over 255 bytes.
func _qtDefaultEventName(_ type: Any.Type) -> String {
    let full = String(reflecting: type)
    let utf8 = Array(full.utf8)
    if utf8.count <= 255 { return full }
    // FNV-1a, twice with different bases: a collision needs both 64-bit halves to match.
    var a: UInt64 = 0xcbf2_9ce4_8422_2325, b: UInt64 = 0x6c62_272e_07bb_0142
    for byte in utf8 {
        a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 &+ 0x9e37_79b9
    }
    func hex(_ v: UInt64) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
    // Keep a prefix that ends on a character boundary and leaves room for "#" + 32 hex.
    var prefix = ""
    var used = 0
    for scalar in full.unicodeScalars {
        let n = String(scalar).utf8.count
        if used + n > 255 - 33 { break }
        prefix.unicodeScalars.append(scalar)
        used += n
    }
    return prefix + "#" + hex(a) + hex(b)
}
