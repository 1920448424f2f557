// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Shared sources" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

private let knownSourceFlags = UInt32(QTBUS_SOURCE_AUTOCONNECT)

@_cdecl("qtbus_source_create")
@usableFromInline package func _qtbus_source_create(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ flags: UInt32,
    _ start: qtbus_source_start?, _ stop: qtbus_source_stop?,
    _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
    _ out: UnsafeMutablePointer<qtbus_source>?
) -> Int32 {
    out?.pointee = qtbus_source(id: 0)
    return entryPoint(
        "qtbus_source_create", bus: bus,
        checks: (
            type: try checkedName(type, .type),
            start: try required(start, "the start function is NULL"),
            out: try required(out, "source_out is NULL"),
            flags: try knownFlags(flags, knownSourceFlags)
        )
    ) {
        storedHandle(
            makeSource($0, $1.type, autoconnect: $1.flags != 0, $1.start, stop, userdata, release),
            in: $1.out, qtbus_source.init(id:))
    }
}

@_cdecl("qtbus_source_connect")
@usableFromInline package func _qtbus_source_connect(_ source: qtbus_source) -> Int32 {
    entryPoint("qtbus_source_connect") { setSourceConnected(source.id, true) }
}

@_cdecl("qtbus_source_disconnect")
@usableFromInline package func _qtbus_source_disconnect(_ source: qtbus_source) -> Int32 {
    entryPoint("qtbus_source_disconnect") { setSourceConnected(source.id, false) }
}

@_cdecl("qtbus_source_dispose")
@usableFromInline package func _qtbus_source_dispose(_ source: qtbus_source) -> Int32 {
    entryPoint("qtbus_source_dispose") { disposeSource(source.id) }
}
