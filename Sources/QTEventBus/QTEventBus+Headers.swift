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
    /// handler.  A closure hopping to a `DispatchQueue` (`atQueue`) runs outside the
    /// engine's handler call, and sees none.
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
            fatalError("\(call): the header \"\(name)\" holds a NUL byte")
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
            fatalError("\(call): the header \"\(name)\": \(problem.reason)")
        }
        return body(buffer.baseAddress, buffer.count)
    }
}
