// SPDX-License-Identifier: MIT
// The two ends of a reply: what a sender receives (QTReply) and what a receiver answers
// through (QTRequestContext).
//
// Replies are bytes in the engine (qtbus_event_reply), so Swift and C answer each
// other's requests. A context answers through a held request (_qtEngineHoldRequest): a
// Swift handler may run after a hop to a DispatchQueue, when the engine's view of the
// delivery is gone, and a context that outlived its handler must fail safely rather
// than touch freed memory.
import QTBusEngine
import Synchronization

/// One reply to a request, as the sender receives it: the request's type and subtype,
/// and the bytes the receiver answered with (copied).
///
/// A Swift receiver answers with ``QTRequestContext/reply(_:)``, a C one with
/// `qtbus_event_reply`; both arrive here.
public struct QTReply: Sendable, Hashable, CustomStringConvertible {
    /// The request's type name.
    public let type: String
    /// The request's subtype, or nil.
    public let subType: String?
    /// The reply's bytes.
    public let bytes: [UInt8]

    /// A reply value (for tests and forwarding).
    public init(type: String, subType: String? = nil, bytes: [UInt8]) {
        self.type = type
        self.subType = subType
        self.bytes = bytes
    }

    /// Copies the reply the engine hands to the sender's callback.
    init(copying reply: OpaquePointer) {
        let named = QTNamedEvent(copying: reply)
        self.init(type: named.type, subType: named.subType, bytes: named.bytes)
    }

    /// The bytes as UTF-8 text (invalid sequences repaired): `"login ok"`.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// The bytes decoded as `V`, or nil when they are not one.
    public func value<V: QTBytesConvertible>(as type: V.Type = V.self) -> V? {
        bytes.withUnsafeBytes { V(qtBytes: $0) }
    }

    /// `type/subType: "text"`.
    public var description: String {
        "\(type)\(subType.map { "/" + $0 } ?? ""): \"\(string)\""
    }
}

/// How a handler answers the request it is handling: the second argument of
/// ``QTEventSubscriberMaker/nextRequest(_:)``.
///
/// ```swift
/// bus.on(LoginRequest.self).priority(700).nextRequest { login, request in
///     request.reply(login.pwd == "secret" ? "login ok" : "bad credentials")
/// }
/// ```
///
/// Reply zero or more times, from the handler (or from threads it waits for): each
/// reply reaches the sender's callback at once, on the replying thread, before
/// ``reply(_:)`` returns. The context is valid until the handler returns: a reply after
/// that is a programmer error and traps, since the sender's completion has run or is
/// about to and the reply could reach nobody. Keep the context no longer than the
/// handler: a context still referenced when its handler returns delays the request's
/// completion until it is released.
///
/// Handlers also receive events that are not requests (plain dispatches reach the same
/// subscriptions): then ``isRequest`` is false, and a reply goes nowhere (false), as
/// nobody asked.
public final class QTRequestContext: @unchecked Sendable {
    // @unchecked: `held` is immutable and `_qtbus_event_reply` on it is thread-safe
    // until `_qtEngineReleaseHeldRequest`, which runs once (`released`) when nobody else
    // can call `reply` (unique at the handler's end, or deinit).
    private let held: OpaquePointer?
    private let ended = Atomic<Bool>(false)
    private let released = Atomic<Bool>(false)

    init(held: _QTHeldRequest?) {
        self.held = held?.raw
    }

    deinit { releaseHold() }

    /// Whether the event is a request (sent with ``QTEventBus/request(_:onReply:completion:)``
    /// or C's `qtbus_request`), which can be answered.
    public var isRequest: Bool { held != nil }

    /// Answers the request with `value`'s bytes (``QTBytesConvertible``: a `String` as
    /// its UTF-8 text, `[UInt8]` as itself), NUL-terminated for C readers, the NUL not
    /// counted.
    ///
    /// Traps when the handler has returned (see ``QTRequestContext``).
    ///
    /// - Returns: true when the sender received it; false, sending nothing, when the
    ///   event is not a request (``isRequest``): nobody asked, so nothing is refused.
    @discardableResult
    public func reply<V: QTBytesConvertible>(_ value: V) -> Bool {
        guard let held else { return false }
        if ended.load(ordering: .acquiring) {
            let type = _qtbus_event_type(held).map { String(cString: $0) } ?? ""
            _qtMisuse(
                "QTRequestContext.reply(_:)",
                "the handler of the request \(_qtQuoted(type)) has returned; reply before it returns")
        }
        let bytes = value.qtBytes
        let before = QTBusError.failuresSoFar
        let status = _withNULTerminated(bytes) { base, count in
            return _qtbus_event_reply(held, base, count)
        }
        if status != 0 { _qtRefused("QTRequestContext.reply(_:)", status, since: before) }
        return true
    }

    /// Runs `handler` with a new context for `held`, then ends the context.
    static func run<V>(_ held: _QTHeldRequest?, _ value: V, _ handler: (V, QTRequestContext) -> Void) {
        var context = QTRequestContext(held: held)
        handler(value, context)
        context.ended.store(true, ordering: .releasing)
        // Nobody kept it: nobody can reply any more, so complete now rather than
        // whenever this local's last use ends.
        if isKnownUniquelyReferenced(&context) { context.releaseHold() }
    }

    private func releaseHold() {
        guard let held, !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        _qtEngineReleaseHeldRequest(held)
    }
}

/// A request held open across a hop (see `_qtEngineHoldRequest`); released exactly once
/// by its taker.
struct _QTHeldRequest: @unchecked Sendable {
    // @unchecked: the held event is immutable and thread-safe to reply through.
    let raw: OpaquePointer

    /// Holds the request `event` carries; nil when it is not a request.
    init?(_ event: OpaquePointer) {
        guard let raw = _qtEngineHoldRequest(event) else { return nil }
        self.raw = raw
    }

    func release() { _qtEngineReleaseHeldRequest(raw) }
}
