// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Tracing" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

/// qtbus_trace_set's `kinds`, checked against the rest of the hook it sets.
@inline(__always)
private func traceKinds(
    _ kinds: UInt32, _ fn: qtbus_trace_fn?, _ userdata: UnsafeMutableRawPointer?,
    _ release: qtbus_release?
) throws(QTBusStatus) -> UInt32 {
    try ensure(
        kinds & ~knownTraceKinds == 0,
        else: fail(QTBUS_EINVAL, "unknown bits 0x%llx in kinds", value: UInt64(kinds & ~knownTraceKinds)))
    try ensure(
        fn != nil || (kinds == 0 && userdata == nil && release == nil),
        else: fail(QTBUS_EINVAL, "fn is NULL (removing the hook) with kinds, userdata or a release"))
    return kinds
}

@_cdecl("qtbus_trace_set")
@usableFromInline package func _qtbus_trace_set(
    _ bus: OpaquePointer?, _ kinds: UInt32, _ fn: qtbus_trace_fn?,
    _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?
) -> Int32 {
    entryPoint("qtbus_trace_set", bus: bus, checks: try traceKinds(kinds, fn, userdata, release)) {
        setTrace($0, kinds: $1, fn, userdata, release)
    }
}
