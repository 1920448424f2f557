// SPDX-License-Identifier: MIT
// The one rule of the Swift API for a call that cannot do what it was asked (stated for
// users in QTEventBus.docc/QTEventBus.md, "Errors"): a programmer error traps, naming
// the call, the name and the reason; a refusal a correct program cannot prevent
// throws QTBusError; a result is never the only sign of a refusal. Every call turns
// names and engine statuses into a trap or a throw through the functions here, so the
// messages read alike and no call can return a refusal quietly.
//
// Names are checked here, before the engine sees them, for two reasons: a Swift string
// may hold a NUL byte, which the engine cannot see (the C string it gets ends there, so
// it would take a shorter, valid name and deliver to the wrong subscribers); and
// several calls do things before the engine call (claim a source, build a box) that a
// refused name must not start. The reasons are worded as qtbus_errmsg() words them
// for a C call ("the subtype "" is empty"); the tests compare the two.
import CQtbusShims
import Glibc
import QTBusEngine

/// What a name is to the call that takes it: the engine's word for it in messages.
package enum _QTNameRole: Sendable {
    /// An event type (`on(named:)`, `dispatch(named:)`, a typed event's `eventName`,
    /// a source's type).
    case type
    /// A subtype (`ofSubType`, `eventSubType`, a `Notification`'s name).
    case subtype
    /// A JSON event's name or a command's name.
    case name

    var text: String {
        switch self {
        case .type: "type name"
        case .subtype: "subtype"
        case .name: "name"
        }
    }
}

/// Whether `name` is a valid engine name: 1 to 255 UTF-8 bytes (a Swift string is
/// always valid UTF-8) and no NUL byte.
func _qtIsValidName(_ name: String) -> Bool {
    let count = name.utf8.count
    return count >= 1 && count <= 255 && !_qtHasNUL(name)
}

/// Whether `text` holds a NUL byte.
func _qtHasNUL(_ text: String) -> Bool {
    text.utf8.withContiguousStorageIfAvailable { utf8 in
        utf8.baseAddress.map { memchr($0, 0, utf8.count) != nil } ?? false
    }
        ?? text.utf8.contains(0)
}

/// Why `name` is not a valid name for its `role`, in qtbus_errmsg()'s words (`the
/// subtype "" is empty`); nil when it is valid.
package func _qtNameProblem(_ name: String, _ role: _QTNameRole) -> String? {
    let count = name.utf8.count
    let problem: String
    if count == 0 {
        problem = "is empty"
    } else if count > 255 {
        problem = "is longer than 255 bytes"
    } else if _qtHasNUL(name) {
        problem = "contains a NUL byte"
    } else {
        return nil
    }
    return "the \(role.text) \(_qtQuoted(name)) \(problem)"
}

/// `name` quoted as qtbus_errmsg() quotes a name: printable ASCII as is, any other
/// byte (a NUL included) as \xNN, at most 48 bytes, then "..." if there is more.
package func _qtQuoted(_ name: String) -> String {
    let shown = 48
    var out = "\""
    for (i, byte) in name.utf8.enumerated() {
        if i == shown {
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

/// Traps unless `name` is a valid name: a programmer error of `call`.
package func _qtRequireName(_ name: String, _ role: _QTNameRole, _ call: @autoclosure () -> String) {
    if let problem = _qtNameProblem(name, role) { _qtMisuse(call(), problem) }
}

/// The engine name of the typed event `E` (its ``QTEvent/eventName``); traps when it is
/// not a valid name: a programmer error of `call`.
@usableFromInline
func _qtRequireTypeName<E: QTEvent>(_ type: E.Type, _ call: @autoclosure () -> String) -> UnsafePointer<CChar> {
    guard let cName = _QTTypeRecord.of(E.self).pointee.cName else {
        _qtMisuse(
            "\(call()) of \(String(reflecting: E.self))",
            _qtNameProblem(E.eventName, .type) ?? "the type name is not valid")
    }
    return cName
}

/// Traps unless `pattern` is a valid pattern (QTBUS_SUB_PATTERN's rules) and name: a
/// programmer error of `call`.
package func _qtRequirePattern(_ pattern: String, _ call: String) {
    _qtRequireName(pattern, .type, call)
    if let problem = _qtEnginePatternProblem(pattern) {
        _qtMisuse(call, "the pattern \(_qtQuoted(pattern)) \(problem)")
    }
}

/// A programmer error: stops the program, as an index out of range does, with a message
/// naming the call and saying what is wrong.
@usableFromInline @inline(never)
package func _qtMisuse(_ call: String, _ reason: String) -> Never {
    fatalError("QTEventBus: \(call): \(reason)")
}

/// The engine refused `call`, which does not throw: it traps with the engine's reason
/// (qtbus_errmsg()). The names were checked before, so this is a refusal the Swift API
/// does not check itself (more subtypes than the engine takes), running out of memory
/// (which Swift's own allocations around the call would trap on too), or a bus destroyed
/// behind its `QTEventBus` object (`cBus` given to `qtbus_bus_destroy`). `before`:
/// `QTBusError.failuresSoFar` taken just before the engine call, when the call has it.
@usableFromInline @inline(never)
func _qtRefused(_ call: String, _ status: Int32, since before: UInt32? = nil) -> Never {
    _qtMisuse(call, _qtEngineReason(status, since: before))
}

/// What qtbus_errmsg() says about the engine call this thread just saw fail with
/// `status`, without its leading C function name (the Swift call is named instead); the
/// status's own text when that call left none (the thread's count of failed calls did
/// not move on from `before`).
func _qtEngineReason(_ status: Int32, since before: UInt32? = nil) -> String {
    let statusText = String(cString: _qtbus_strerror(status))
    if let before, QTBusError.failuresSoFar == before { return statusText }
    let message = Array(String(cString: _qtbus_errmsg()).utf8)
    guard !message.isEmpty else { return statusText }
    // "qtbus_dispatch: the subtype ..." -> "the subtype ..."
    if let colon = message.firstIndex(of: UInt8(ascii: ":")), colon + 1 < message.count,
        message[colon + 1] == UInt8(ascii: " "), !message[..<colon].contains(UInt8(ascii: " "))
    {
        return String(decoding: message[(colon + 2)...], as: UTF8.self)
    }
    return String(decoding: message, as: UTF8.self)
}

/// The status of an engine call made by `call`, which throws: a refusal a correct program
/// cannot prevent (JSON, busy, stale, closed, out of memory) is thrown, with
/// qtbus_errmsg()'s text when the call set it (`before`: `QTBusError.failuresSoFar`
/// taken just before it); `QTBUS_EINVAL`, a programmer error, traps.
func _qtThrowing(_ status: Int32, since before: UInt32, _ call: @autoclosure () -> String) throws(QTBusError) {
    guard status < 0 else { return }
    if status == QTBUS_EINVAL.rawValue { _qtRefused(call(), status, since: before) }
    throw QTBusError(status: status, since: before) ?? QTBusError(.other(status))
}

extension QTEventBus {
    /// Whether `name` can be an event type name or subtype (or a JSON event's, a
    /// command's or a source's name): 1 to 255 bytes of UTF-8 with no NUL byte, the rule
    /// C code follows too.
    ///
    /// Every call that takes a name traps on one that is not (a programmer error; see
    /// "Errors" in the overview). Check names that come from outside the program, such
    /// as a user's input or a server's message, with this first.
    public static func isValidName(_ name: String) -> Bool { _qtIsValidName(name) }
}
