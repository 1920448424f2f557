// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Buses" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

@_cdecl("qtbus_shared")
@usableFromInline package func _qtbus_shared() -> OpaquePointer {
    OpaquePointer(sharedBus)
}

@_cdecl("qtbus_bus_create")
@usableFromInline package func _qtbus_bus_create() -> OpaquePointer? {
    entryPoint("qtbus_bus_create", making: { makeBus(shared: false).map { OpaquePointer($0) } })
}

@_cdecl("qtbus_bus_destroy")
@usableFromInline package func _qtbus_bus_destroy(_ bus: OpaquePointer?) -> Int32 {
    // In a section: a concurrent second destroy still reads the bus safely (ECLOSED).
    entryPoint("qtbus_bus_destroy", bus: bus, .memory) { destroyBus($0) }
}

@_cdecl("qtbus_bus_wait_idle")
@usableFromInline package func _qtbus_bus_wait_idle(_ bus: OpaquePointer?, _ timeoutMs: Int32) -> Int32 {
    // The checks and the waiter's registration in a section; the wait after it, in
    // none.  A timeout is an answer, not a failure: no qtbus_errmsg(), no MISUSE record.
    var unit: UInt64 = 0
    let status = entryPoint("qtbus_bus_wait_idle", bus: bus, .memory) { startIdleWait($0, &unit) }
    guard status == QTBUS_OK.rawValue else { return status }
    return waitIdle(UnsafeMutablePointer<Bus>(bus!), timeoutMs: timeoutMs, unit: unit)
        ? QTBUS_OK.rawValue : QTBUS_ETIMEDOUT.rawValue
}
