// SPDX-License-Identifier: MIT
// Event headers from Swift (qtbus.h, "Event headers"; CONTRACT section 12): the headers
// of the event being handled, and named dispatches that give some.  The rule a header
// follows is the engine's (`_qtEngineHeadersProblem`, Primitives/Headers.swift); a
// header that breaks it is a programmer error here: the call traps, naming it.
import CQtbusShims
import Glibc
import QTBusEngine

extension QTEventBus {
    /// The headers of the event the calling thread is handling: those its dispatch gave
    /// and those it inherited (`traceparent`, `tracestate`, `baggage`); empty outside a
    /// handler.  An `atQueue` handler, which runs later on its `DispatchQueue`, sees
    /// its event's headers too, and its dispatches inherit them.
    public static var currentHeaders: [String: String] {
        var out: [String: String] = [:]
        _qtEngineCurrentHeaders { name, value in out[String(cString: name)] = String(cString: value) }
        return out
    }

    /// ``dispatch(named:subType:bytes:sticky:)`` with headers: the event carries them
    /// to every delivery, and a dispatch made by its handlers inherits their
    /// `traceparent`, `tracestate` and `baggage`.  They are given in the order of their
    /// names.  A header that breaks the rules (a name of 1 to 64 RFC 9110 token
    /// characters, not `Qtbus-*`; a value of up to 4,096 bytes without CR or LF; at most
    /// 32 headers and 16,384 bytes) traps, naming it.
    @discardableResult
    public func dispatch(
        named type: String, subType: String? = nil, bytes: [UInt8] = [],
        sticky: Bool = false, headers: [String: String]
    ) -> Int {
        let call = "dispatch(named:subType:bytes:sticky:headers:)"
        _qtRequireName(type, .type, call)
        if let subType { _qtRequireName(subType, .subtype, call) }
        let flags = (sticky ? UInt32(QTBUS_EVENT_STICKY) : 0) | UInt32(QTBUS_EVENT_HEADERS)
        let status = _qtWithHeaders(headers, call) { list, count in
            type.withCString { t in
                _qtWithOptionalCString(subType) { s in
                    // NUL-terminated for C readers, as the form without headers sends them.
                    (bytes + [0]).withUnsafeBytes { b in
                        var d = qtbus_event_desc(
                            type: t, subtype: s, data: bytes.isEmpty ? nil : b.baseAddress, size: bytes.count,
                            object: nil, object_release: nil, flags: flags, headers: list, header_count: count)
                        return _qtbus_dispatch(raw, &d)
                    }
                }
            }
        }
        if status < 0 { _qtRefused(call, status) }
        return Int(status)
    }
}

extension QTEventBus {
    /// ``dispatch(_:sticky:)`` with headers (see ``dispatch(named:subType:bytes:sticky:headers:)``
    /// for what they do and the rules they follow; one that breaks them traps, naming
    /// it).  Not the hot path: the event's value is copied to the heap, as for a posted
    /// dispatch, so that ``dispatch(_:sticky:)`` without headers stays as it was.
    @discardableResult
    public func dispatch<E: QTEvent>(_ event: E, sticky: Bool = false, headers: [String: String]) -> Int {
        let call = "dispatch(_:sticky:headers:)"
        let cName = _qtRequireTypeName(E.self, call)
        if let subType = event.eventSubType {
            _qtRequireName(subType, .subtype, "\(call) of \(String(reflecting: E.self))")
        }
        var bytes: [UInt8]? = nil
        if _QTTypeRecord.of(E.self).pointee.isBytes, let bytesEvent = event as? any QTBytesEvent {
            bytes = bytesEvent.eventBytes
        }
        let flags = (sticky ? UInt32(QTBUS_EVENT_STICKY) : 0) | UInt32(QTBUS_EVENT_HEADERS)
        let status = _qtWithHeaders(headers, call) { list, count in
            _withNULTerminated(bytes ?? []) { base, size in
                _qtWithOptionalCString(event.eventSubType) { s in
                    let cell = _qtMakeCell(event)
                    var d = qtbus_event_desc(
                        type: cName, subtype: s, data: bytes == nil ? nil : UnsafeRawPointer(base), size: size,
                        object: cell, object_release: _qtEventCellRelease, flags: flags, headers: list,
                        header_count: count)
                    let status = _qtbus_dispatch(raw, &d)
                    // A failed dispatch took nothing.
                    if status < 0 { _qtFreeCell(cell) }
                    return status
                }
            }
        }
        if status < 0 { _qtRefused(call, status) }
        return Int(status)
    }

    /// ``dispatchJSON(name:json:)`` with headers (see
    /// ``dispatch(named:subType:bytes:sticky:headers:)``; one that breaks the rules traps,
    /// naming it).
    ///
    /// - Throws: as ``dispatchJSON(name:json:)``.
    @discardableResult
    public func dispatchJSON(name: String, json: String, headers: [String: String]) throws(QTBusError) -> Int {
        let call = "dispatchJSON(name:json:headers:)"
        _qtRequireName(name, .name, call)
        let before = QTBusError.failuresSoFar
        let status = _qtWithHeaders(headers, call) { list, count in
            // As dispatchJSON(name:json:): JSON text has no NUL byte (RFC 8259).
            name.withCString { n in
                _qtWithCName(json) { j in _qtEngineDispatchJSON(raw, n, j, headers: list, count: count) }
            }
        }
        guard let status else {
            throw QTBusError(.invalidJSON, message: "\(call): the text is not JSON (it contains a NUL byte)")
        }
        try _qtThrowing(status, since: before, call)
        return Int(status)
    }

    /// ``request(_:onReply:completion:)`` with headers, which its handlers read and
    /// inherit (see ``dispatch(named:subType:bytes:sticky:headers:)``; one that breaks
    /// the rules traps, naming it).  Replies carry none.
    @discardableResult
    public func request<E: QTEvent>(
        _ event: E, headers: [String: String], onReply: (@Sendable (QTReply) -> Void)?,
        completion: (@Sendable () -> Void)? = nil
    ) -> Int {
        let call = "request(_:headers:onReply:completion:)"
        let before = QTBusError.failuresSoFar
        let status = _requestTyped(event, call, onReply, completion, headers: headers)
        if status < 0 { _qtRefused(call, status, since: before) }
        return Int(status)
    }

    /// ``request(_:timeout:)`` with headers (as ``request(_:headers:onReply:completion:)``).
    public func request<E: QTEvent>(
        _ event: E, timeout: Duration? = nil, headers: [String: String]
    ) async throws -> [QTReply] {
        try await _requestTypedCollecting(event, "request(_:timeout:headers:)", timeout, headers: headers)
    }

    /// ``request(_:replyAs:timeout:)`` with headers (as
    /// ``request(_:headers:onReply:completion:)``).
    public func request<E: QTEvent, V: QTBytesConvertible>(
        _ event: E, replyAs type: V.Type, timeout: Duration? = nil, headers: [String: String]
    ) async throws -> [V] {
        try await _requestTypedCollecting(event, "request(_:replyAs:timeout:headers:)", timeout, headers: headers)
            .compactMap { $0.value(as: V.self) }
    }

    /// ``request(named:subType:bytes:onReply:completion:)`` with headers (as
    /// ``request(_:headers:onReply:completion:)``).
    @discardableResult
    public func request(
        named type: String, subType: String? = nil, bytes: [UInt8] = [], headers: [String: String],
        onReply: (@Sendable (QTReply) -> Void)?, completion: (@Sendable () -> Void)? = nil
    ) -> Int {
        let call = "request(named:subType:bytes:headers:onReply:completion:)"
        let before = QTBusError.failuresSoFar
        let status = _requestNamed(type, subType, bytes, call, onReply, completion, headers: headers)
        if status < 0 { _qtRefused(call, status, since: before) }
        return Int(status)
    }

    /// ``request(named:subType:bytes:timeout:)`` with headers (as
    /// ``request(_:headers:onReply:completion:)``).
    public func request(
        named type: String, subType: String? = nil, bytes: [UInt8] = [], timeout: Duration? = nil,
        headers: [String: String]
    ) async throws -> [QTReply] {
        let call = "request(named:subType:bytes:timeout:headers:)"
        _qtRequireRequestNames(type, subType, call)
        return try await _collect(timeout: timeout, call) { onReply, completion in
            _requestNamed(type, subType, bytes, call, onReply, completion, headers: headers)
        }
    }
}

/// Calls `body` with `s` as a C string, or nil.
private func _qtWithOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

/// Calls `body` with `headers` as C headers (sorted by name), after checking them with
/// the engine's rule: one that breaks it traps, naming `call` and the header.
func _qtWithHeaders<R>(
    _ headers: [String: String], _ call: String, _ body: (UnsafePointer<qtbus_header>?, Int) -> R
) -> R {
    let sorted = headers.sorted { $0.key < $1.key }
    var strings: [UnsafeMutablePointer<CChar>] = []
    strings.reserveCapacity(2 * sorted.count)
    defer { for s in strings { free(s) } }
    var list: [qtbus_header] = []
    list.reserveCapacity(sorted.count)
    for (name, value) in sorted {
        // A NUL byte would end the C string early: the engine would see another header.
        if name.utf8.contains(0) || value.utf8.contains(0) {
            _qtMisuse(call, "the header \"\(name)\" holds a NUL byte")
        }
        let n = strdup(name)!
        let v = strdup(value)!
        strings.append(n)
        strings.append(v)
        list.append(qtbus_header(name: n, value: v))
    }
    return list.withUnsafeBufferPointer { buffer in
        if let problem = _qtEngineHeadersProblem(buffer.baseAddress, buffer.count) {
            let name = problem.index < sorted.count ? sorted[problem.index].key : ""
            _qtMisuse(call, "the header \"\(name)\": \(problem.reason)")
        }
        return body(buffer.baseAddress, buffer.count)
    }
}
