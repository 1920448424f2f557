// SPDX-License-Identifier: MIT
// QTEventBus's one rule for a call that cannot do what it was asked (its
// Delivery/_Refusals.swift), for the bridge's calls: a programmer error traps with
// "QTEventBus: <call>: <reason>", a refusal a correct program cannot prevent throws
// QTBusError with qtbus_errmsg()'s words.
import CQtbusNATS
import CQtbusShims
import QTBusEngine
import QTEventBus

/// A programmer error of `call`: stops the program as QTEventBus's calls do.
func _qtnMisuse(_ call: String, _ reason: String) -> Never {
    fatalError("QTEventBus: \(call): \(reason)")
}

/// The error of a C call that returned `status` on this thread, with qtbus_errmsg()'s
/// text when that call set it (the thread's count of failed calls moved on from `before`).
func _qtnError(_ status: Int32, since before: UInt32) -> QTBusError {
    let message = qtshim_failures() != before ? String(cString: _qtbus_errmsg()) : ""
    return QTBusError(QTBusError.Code(status: status) ?? .other(status), message: message)
}

/// A refusal `call` does not throw: it traps with the library's reason.
func _qtnRefused(_ call: String, _ status: Int32, since before: UInt32) -> Never {
    let error = _qtnError(status, since: before)
    _qtnMisuse(call, error.description)
}

/// Traps unless `name` is a valid name for its role (QTEventBus's rule).
func _qtnRequireName(_ name: String, _ role: _QTNameRole, _ call: String) {
    _qtRequireName(name, role, call)
}

/// Whether `name` has a whole token "*" or ">", which makes it a pattern for the bridge
/// (qtbus_nats.h, PATTERNS).
func _qtnIsPattern(_ name: String) -> Bool {
    name.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).contains { token in
        token.count == 1 && (token.first == UInt8(ascii: "*") || token.first == UInt8(ascii: ">"))
    }
}

/// Traps unless `type` is a valid type name and no pattern: the `named:` calls.
func _qtnRequireType(_ type: String, _ call: String) {
    _qtRequireName(type, .type, call)
    if _qtnIsPattern(type) {
        let matching = call.replacingFirst("named:", with: "matching:")
        _qtnMisuse(call, "the type name \(_qtnQuoted(type)) is a pattern: use \(matching)")
    }
}

/// Traps unless `pattern` is a valid pattern, as `on(matching:)` takes it.
func _qtnRequirePattern(_ pattern: String, _ call: String) {
    _qtRequireName(pattern, .type, call)
    if let problem = _qtEnginePatternProblem(pattern) {
        _qtnMisuse(call, "the pattern \(_qtnQuoted(pattern)) \(problem)")
    }
}

/// The offset of the first NUL byte of `text`, or nil.
func _qtnNULOffset(_ text: String) -> Int? {
    text.utf8.firstIndex(of: 0).map { text.utf8.distance(from: text.utf8.startIndex, to: $0) }
}

/// `duration` in whole milliseconds for the C options: nil is 0 (the library's default),
/// a negative one -1 (which the library refuses), a huge one Int32.max.
func _qtnMilliseconds(_ duration: Duration?) -> Int32 {
    guard let duration else { return 0 }
    let (seconds, attoseconds) = duration.components
    if seconds < 0 || attoseconds < 0 { return -1 }
    if seconds >= Int64(Int32.max / 1000) { return Int32.max }
    return Int32(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
}

/// `name` quoted as qtbus_errmsg() quotes a name: printable ASCII as is, any other byte
/// as \xNN, at most 48 bytes, then "...".
func _qtnQuoted(_ name: String) -> String {
    var out = "\""
    for (i, byte) in name.utf8.enumerated() {
        if i == 48 {
            out += "..."
            break
        }
        if byte >= 0x20 && byte < 0x7f && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
            out.unicodeScalars.append(Unicode.Scalar(byte))
        } else {
            let hex = String(byte, radix: 16)
            out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
        }
    }
    return out + "\""
}

extension String {
    /// This string with the first `target` replaced (no Foundation here).
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}
