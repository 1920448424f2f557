// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Status codes" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

private let versionString = StaticName(qtshim_version_string())

// MARK: - Why the last call failed

/// qtbus_report's own checks: the caller's function name and failure.
@inline(__always)
private func reportable(_ function: UnsafePointer<CChar>?, _ status: Int32) throws(QTBusStatus) -> UnsafePointer<CChar>
{
    let function = try required(function, "the function name is NULL")
    try ensure(status < 0, else: fail(QTBUS_EINVAL, "the status %llu is not a failure (< 0)", value: UInt64(status)))
    return function
}

@_cdecl("qtbus_report")
@usableFromInline package func _qtbus_report(
    _ bus: OpaquePointer?, _ function: UnsafePointer<CChar>?, _ status: Int32,
    _ reason: UnsafePointer<CChar>?
) -> Int32 {
    // The failure it records and returns is the caller's, under the caller's name: only
    // a refusal is qtbus_report's own.
    let own = entryPoint("qtbus_report", on: bus, checks: try reportable(function, status)) { function in
        if let reason { qtshim_fail_reason(status, reason) }
        qtshim_failed(function, status)
        traceMisuse(bus, function, status)
        return QTBUS_OK.rawValue
    }
    return own < 0 ? own : status
}

@_cdecl("qtbus_errmsg")
@usableFromInline package func _qtbus_errmsg() -> UnsafePointer<CChar> {
    qtshim_errmsg()
}

// MARK: - Status and version

@_cdecl("qtbus_strerror")
@usableFromInline package func _qtbus_strerror(_ status: Int32) -> UnsafePointer<CChar> {
    qtshim_status_text(status)
}

@_cdecl("qtbus_version")
@usableFromInline package func _qtbus_version() -> UnsafePointer<CChar> {
    versionString.bytes
}
