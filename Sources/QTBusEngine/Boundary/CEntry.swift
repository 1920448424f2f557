// SPDX-License-Identifier: MIT
// The C boundary: one @_cdecl function per declaration of include/qtbus.h, in a file per
// section of the header (CBus.swift: "Buses", CSubscribe.swift: "Subscribing", ...;
// CSignals.swift: "Typed signals"), each in the one shape of a C entry point:
//
//     @_cdecl("qtbus_x")
//     func _qtbus_x(_ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?) -> Int32 {
//         entryPoint("qtbus_x", bus: bus, .memory, checks: try checkedName(name, .name)) { bus, name in
//             featureX(bus, name)
//         }
//     }
//
// `checks` converts and checks the arguments: each check that refuses records its reason
// (Misuse.swift) and throws the status.  The trailing closure is the one call into the
// engine, made in the section the call needs.  `entryPoint` owns the rest: the section,
// and for a failure (a refusal, or a negative status from the engine) the function's
// name in qtbus_errmsg() and, for a call naming a bus, the MISUSE record of the bus's
// trace hook.  `checks` is an autoclosure because a closure written out would have to
// spell `throws(QTBusStatus)`: Swift 6 takes a throwing closure's error to be `any
// Error`, which is allocated.  Everything on the way to the engine is inlined, so the
// shape adds nothing to the dispatch path; what runs only for a failure is out of line.
//
// They take the exact types the header declares, imported from it through CQtbusShims,
// so a mismatch with the header is a compile error here; the C test suite's test_abi
// and scripts/check-exports.sh check the exported names and types from the other side.
// Swift names carry a leading underscore so they cannot be confused with the imported
// C declarations.  They are `package` (and @usableFromInline for the Swift API's
// inlinable code): QTEventBus calls them, nothing outside this package sees them; the
// C symbols are exported all the same.
import CQtbusShims
import CQtbusLibc

/// What an entry point's engine call runs in (Reclamation.swift).
enum Section {
    /// None: the engine takes the registry lock, or opens what it needs, itself.
    case none
    /// A memory section: what the call reads of the store stays allocated, and it
    /// neither delays nor runs other threads' releases.
    case memory
    /// A dispatch section: as a memory section, and the releases of what it may
    /// deliver to wait for it.
    case dispatch
}

/// Runs an entry point: `checks`, then `body` in `section`; returns `body`'s status.
/// `nested`: `body` calls another entry point (qtbus_signal_connect calls
/// qtbus_subscribe), whose report of its own failure stands, with `function` put before it.
@inline(__always)
func entryPoint<Checked>(
    _ function: StaticString, on bus: OpaquePointer? = nil, _ section: Section = .none,
    nested: Bool = false, checks: @autoclosure () throws(QTBusStatus) -> Checked,
    _ body: (inout Checked) -> Int32
) -> Int32 {
    var checked: Checked
    do {
        checked = try checks()
    } catch {
        failedCall(function, on: bus, error.value)
        return error.value
    }
    return run(function, on: bus, section, nested: nested) { body(&checked) }
}

/// `entryPoint` of a call naming a bus: `bus` is checked first (NULL is refused) and handed
/// to `body` apart from what `checks` returns.  Apart, because when `body` passes a part
/// of that by address (an event to dispatch), the optimizer keeps all of it in memory:
/// the dispatch path would store the bus there and load it back.
@inline(__always)
func entryPoint<Checked>(
    _ function: StaticString, bus: OpaquePointer?, _ section: Section = .none,
    nested: Bool = false, checks: @autoclosure () throws(QTBusStatus) -> Checked,
    _ body: (UnsafeMutablePointer<Bus>, inout Checked) -> Int32
) -> Int32 {
    let engine: UnsafeMutablePointer<Bus>
    var checked: Checked
    do {
        engine = try checkedBus(bus)
        checked = try checks()
    } catch {
        failedCall(function, on: bus, error.value)
        return error.value
    }
    return run(function, on: bus, section, nested: nested) { body(engine, &checked) }
}

/// `entryPoint` of a dispatch by name: `body` runs in a dispatch section and is given
/// the thread's record, which opening the section read (`withEpochRecord`).
@inline(__always)
func dispatchEntryPoint<Checked>(
    _ function: StaticString, bus: OpaquePointer?,
    checks: @autoclosure () throws(QTBusStatus) -> Checked,
    _ body: (UnsafeMutablePointer<Bus>, inout Checked, UnsafeMutablePointer<ThreadRecord>) -> Int32
)
    -> Int32
{
    let engine: UnsafeMutablePointer<Bus>
    var checked: Checked
    do {
        engine = try checkedBus(bus)
        checked = try checks()
    } catch {
        failedCall(function, on: bus, error.value)
        return error.value
    }
    let status = withEpochRecord { body(engine, &checked, $0) }
    if status < 0 { failedCall(function, on: bus, status) }
    return status
}

/// `entryPoint` of a call naming a bus whose other arguments need no check.
@inline(__always)
func entryPoint(
    _ function: StaticString, bus: OpaquePointer?, _ section: Section = .none,
    _ body: (UnsafeMutablePointer<Bus>) -> Int32
) -> Int32 {
    entryPoint(function, bus: bus, section, checks: ()) { bus, _ in body(bus) }
}

/// `body` in `section`, its failure reported.
@inline(__always)
private func run(
    _ function: StaticString, on bus: OpaquePointer?, _ section: Section, nested: Bool,
    _ body: () -> Int32
) -> Int32 {
    let failuresBefore = nested ? qtshim_failures() : 0
    let status: Int32
    switch section {
    case .none:
        // A call that opens no section still closes what a callback that did not
        // return left open (opening a section does it for the others).
        checkCallbacksReturned()
        status = body()
    case .memory: status = withMemoryEpoch(body)
    case .dispatch: status = withEpoch(body)
    }
    if status < 0 {
        if nested && qtshim_failures() != failuresBefore {
            failedAround(function, on: bus, status)
        } else {
            failedCall(function, on: bus, status)
        }
    }
    return status
}

/// `entryPoint` of a call whose arguments need no check.
@inline(__always)
func entryPoint(
    _ function: StaticString, on bus: OpaquePointer? = nil, _ section: Section = .none,
    _ body: () -> Int32
) -> Int32 {
    entryPoint(function, on: bus, section, checks: ()) { _ in body() }
}

/// `entryPoint` of a call that returns what it made, or NULL when memory ran out.
@inline(__always)
func entryPoint<Made>(_ function: StaticString, making body: () -> Made?) -> Made? {
    let made = body()
    if made == nil { failedCall(function, on: nil, QTBUS_ENOMEM.rawValue) }
    return made
}

/// `status`, reported as `entryPoint` reports it: for the Swift API's ways into C entry
/// points (SwiftAPISupport.swift).
@inline(__always)
func reported(_ function: StaticString, on bus: OpaquePointer?, _ status: Int32) -> Int32 {
    if status < 0 { failedCall(function, on: bus, status) }
    return status
}

/// Finishes qtbus_errmsg()'s text with `function`; for a call naming a bus, also sends
/// its trace hook a MISUSE record (Trace.swift).
@inline(never)
func failedCall(_ function: StaticString, on bus: OpaquePointer?, _ status: Int32) {
    qtshim_failed(cText(function), status)
    traceMisuse(bus, cText(function), status)
}

/// `failedCall`, when an inner entry point finished the text already: `function` goes before it.
@inline(never)
private func failedAround(_ function: StaticString, on bus: OpaquePointer?, _ status: Int32) {
    qtshim_failed_outer(cText(function))
    traceMisuse(bus, cText(function), status)
}

// MARK: - Checks of arguments

/// The bus a call names; refused when NULL.
@inline(__always)
func checkedBus(_ bus: OpaquePointer?) throws(QTBusStatus) -> UnsafeMutablePointer<Bus> {
    guard let bus else { throw QTBusStatus(failNull("the bus is NULL")) }
    return UnsafeMutablePointer<Bus>(bus)
}

/// The event a handler was given; refused when NULL.
@inline(__always)
func checkedEvent(_ event: OpaquePointer?) throws(QTBusStatus) -> UnsafeMutablePointer<EventView> {
    guard let event else { throw QTBusStatus(failNull("the event is NULL")) }
    return UnsafeMutablePointer<EventView>(event)
}

/// The size a caller passed for a struct that grows (qtbus.h, STRUCTS THAT GROW): at
/// least the struct's `first` size.
@inline(__always)
func grownStructSize(_ size: Int, first: Int) throws(QTBusStatus) -> Int {
    // size_t arrives as Int: above Int.max it is negative.
    try ensure(size >= first, else: fail(QTBUS_EINVAL, "the struct's size is smaller than any version of it"))
    return size
}

/// Copies `value` into the caller's struct of `size` bytes: the fields inside it, and
/// zeros for what the caller's header has beyond this library's.
func fillGrown<T>(_ value: T, into out: UnsafeMutableRawPointer, size: Int) {
    var value = value
    let known = MemoryLayout<T>.size
    withUnsafeBytes(of: &value) { out.copyMemory(from: $0.baseAddress!, byteCount: min(size, known)) }
    if size > known { memset(out + known, 0, size - known) }
}

/// A required argument; refused with `reason` when NULL.
func required<T>(_ value: T?, _ reason: StaticString) throws(QTBusStatus) -> T {
    guard let value else { throw QTBusStatus(failNull(reason)) }
    return value
}

/// Refused with `status` (its reason recorded) unless `condition` holds.
@inline(__always)
func ensure(_ condition: Bool, else status: @autoclosure () -> Int32) throws(QTBusStatus) {
    guard condition else { throw QTBusStatus(status()) }
}

/// A required, valid name; refused when NULL, empty, over-long or not UTF-8.
@inline(__always)
func checkedName(_ text: UnsafePointer<CChar>?, _ role: NameRole) throws(QTBusStatus) -> CName {
    guard let text, let name = CName(text), name.isValidUTF8 else { throw QTBusStatus(failName(text, role)) }
    return name
}

/// An optional name: nil for NULL, else as `checkedName`.
@inline(__always)
func checkedOptionalName(_ text: UnsafePointer<CChar>?, _ role: NameRole) throws(QTBusStatus) -> CName? {
    guard text != nil else { return nil }
    return try checkedName(text, role)
}

/// A name whose UTF-8 is checked later (by the engine, only when it is new); refused
/// when NULL, empty or over-long.
@inline(__always)
func scannedName(_ text: UnsafePointer<CChar>?, _ role: NameRole) throws(QTBusStatus) -> CName {
    guard let text, let name = CName(text) else { throw QTBusStatus(failName(text, role)) }
    return name
}

/// An optional name scanned as `scannedName`: nil for NULL.
@inline(__always)
func scannedOptionalName(_ text: UnsafePointer<CChar>?, _ role: NameRole) throws(QTBusStatus) -> CName? {
    guard let text else { return nil }
    return try scannedName(text, role)
}

/// A made handle's id (`result` >= 0) stored in `out`; a failure (< 0) returned as is.
@inline(__always)
func storedHandle<Handle>(_ result: Int64, in out: UnsafeMutablePointer<Handle>, _ handle: (UInt64) -> Handle) -> Int32
{
    if result < 0 { return Int32(result) }
    out.pointee = handle(UInt64(result))
    return QTBUS_OK.rawValue
}

/// `flags`, refused when they hold bits not in `known`.
@inline(__always)
func knownFlags(_ flags: UInt32, _ known: UInt32) throws(QTBusStatus) -> UInt32 {
    try ensure(flags & ~known == 0, else: fail(QTBUS_EINVAL, "unknown flag bits 0x%llx", value: UInt64(flags & ~known)))
    return flags
}
