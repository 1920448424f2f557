// SPDX-License-Identifier: MIT
// Why a call failed, for qtbus_errmsg() and QTBUS_DEBUG=misuse (CQtbusShims' misuse.c).
//
// The engine code that finds the reason records it with the status it returns; the C
// boundary adds the function's name when its call returns that status (`entryPoint`,
// Boundary/CEntry.swift, which for a call naming a bus also sends the bus's trace hook
// a MISUSE record).
// Nothing here allocates: the texts are static, the names the caller's.
import CQtbusShims
import CQtbusLibc

@inline(__always)
func cText(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Records `reason` for the failing call and returns `status`.
@inline(never)
func fail(_ status: qtbus_status, _ reason: StaticString) -> Int32 {
    qtshim_fail_reason(status.rawValue, cText(reason))
    return status.rawValue
}

/// Records a reason that shows a number (`format` has one `%llu` or `%llx`).
@inline(never)
func fail(_ status: qtbus_status, _ format: StaticString, value: UInt64) -> Int32 {
    qtshim_fail_value(status.rawValue, cText(format), value)
    return status.rawValue
}

/// QTBUS_ECLOSED, with its reason.
@inline(never)
func failClosed() -> Int32 { fail(QTBUS_ECLOSED, "the bus is destroyed or being destroyed") }

/// QTBUS_ESTALE for a token, with its reason.
@inline(never)
func failStaleToken() -> Int32 {
    fail(QTBUS_ESTALE, "the token is not live (disposed, its ONCE event delivered, its bus destroyed, or never made)")
}

/// QTBUS_ESTALE for a bag, with its reason.
@inline(never)
func failStaleBag() -> Int32 { fail(QTBUS_ESTALE, "the bag is disposed or was never made") }

/// What a name given to a call is, in messages ("type name", "subtype", ...).
enum NameRole {
    case type, subtype, name, label

    var text: StaticString {
        switch self {
        case .type: "type name"
        case .subtype: "subtype"
        case .name: "name"
        case .label: "label"
        }
    }
}

/// Records why `text` is not a valid name (NULL, empty, longer than 255 bytes, not
/// UTF-8) and returns QTBUS_EINVAL.
@inline(never)
func failName(_ text: UnsafePointer<CChar>?, _ role: NameRole) -> Int32 {
    let problem: StaticString
    if let text {
        let length = strlen(text)
        problem = length == 0 ? "is empty" : length > 255 ? "is longer than 255 bytes" : "is not valid UTF-8"
    } else {
        problem = ""
    }
    qtshim_fail_name(QTBUS_EINVAL.rawValue, cText(role.text), text, cText(problem))
    return QTBUS_EINVAL.rawValue
}

/// Records that a pattern (QTBUS_SUB_PATTERN) is invalid, naming it and `problem`
/// (Subjects.swift), and returns QTBUS_EINVAL.
@inline(never)
func failPattern(_ pattern: CName, _ problem: StaticString) -> Int32 {
    qtshim_fail_name(QTBUS_EINVAL.rawValue, cText("pattern"), pattern.bytes, cText(problem))
    return QTBUS_EINVAL.rawValue
}

/// Records that a required argument is NULL and returns QTBUS_EINVAL.
@inline(never)
func failNull(_ reason: StaticString) -> Int32 { fail(QTBUS_EINVAL, reason) }
