// SPDX-License-Identifier: MIT
// QTEventBus's one rule for a call that cannot do what it was asked (its
// Delivery/_Refusals.swift), for the bridge's calls: a programmer error traps with
// "QTEventBus: <call>: <reason>", a refusal a correct program cannot prevent throws
// QTBusError with qtbus_errmsg()'s words.
import CQtbusNATS
import CQtbusShims
import QTBusEngine
import QTEventBus

/// The error of a C call that returned `status` on this thread, with qtbus_errmsg()'s
/// text when that call set it (the thread's count of failed calls moved on from `before`).
func _qtnError(_ status: Int32, since before: UInt32) -> QTBusError {
    let message = qtshim_failures() != before ? String(cString: _qtbus_errmsg()) : ""
    return QTBusError(QTBusError.Code(status: status) ?? .other(status), message: message)
}

/// A refusal `call` does not throw: it traps with the library's reason.
func _qtnRefused(_ call: String, _ status: Int32, since before: UInt32) -> Never {
    let error = _qtnError(status, since: before)
    _qtMisuse(call, error.description)
}

/// Whether `name` has a whole token "*" or ">", which makes it a pattern for the bridge
/// (qtbus_nats.h, PATTERNS).  The bridge's `qn_is_pattern` (nats/subjects.c) in Swift:
/// that one is hidden in the C library, and this one decides before any C call, to trap
/// with the Swift call's name.
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
        _qtMisuse(call, "the type name \(_qtQuoted(type)) is a pattern: use \(matching)")
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

extension String {
    /// This string with the first `target` replaced (no Foundation here).
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}
