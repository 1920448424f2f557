// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Commands" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

private let knownCommandFlags = UInt32(QTBUS_COMMAND_CONCURRENT)

@_cdecl("qtbus_command_create")
@usableFromInline package func _qtbus_command_create(
    _ bus: OpaquePointer?, _ name: UnsafePointer<CChar>?, _ flags: UInt32,
    _ execute: qtbus_execute_fn?, _ userdata: UnsafeMutableRawPointer?,
    _ release: qtbus_release?, _ out: UnsafeMutablePointer<qtbus_command>?
) -> Int32 {
    out?.pointee = qtbus_command(id: 0)
    return entryPoint(
        "qtbus_command_create", bus: bus,
        checks: (
            name: try checkedName(name, .name),
            execute: try required(execute, "the execute function is NULL"),
            out: try required(out, "command_out is NULL"),
            flags: try knownFlags(flags, knownCommandFlags)
        )
    ) {
        storedHandle(
            makeCommand($0, $1.name, concurrent: $1.flags != 0, $1.execute, userdata, release),
            in: $1.out, qtbus_command.init(id:))
    }
}

/// qtbus_command_execute's input, checked in full: it is not looked up in any table.
@inline(__always)
private func commandInput(_ input: UnsafePointer<qtbus_event_desc>?) throws(QTBusStatus) -> Outgoing? {
    guard let input else { return nil }
    let event = try outgoing(input)
    try ensure(
        input.pointee.flags & ~headersFlag == 0, else: fail(QTBUS_EINVAL, "an input cannot be sticky (input->flags)"))
    try ensureUTF8(event, of: input)
    return event
}

@_cdecl("qtbus_command_execute")
@usableFromInline package func _qtbus_command_execute(
    _ command: qtbus_command, _ input: UnsafePointer<qtbus_event_desc>?,
    _ queue: OpaquePointer?
) -> Int32 {
    entryPoint(
        "qtbus_command_execute",
        checks: (input: try commandInput(input), queue: queue.map { UnsafeMutablePointer<Queue>($0) })
    ) { checked in
        guard let input else { return executeCommand(command.id, &checked.input, checked.queue) }
        // The input is an event: its headers, given and inherited, as a dispatch's.
        return withCallHeaders(input, flags: input.pointee.flags) { headers in
            checked.input!.headers = headers
            return executeCommand(command.id, &checked.input, checked.queue)
        }
    }
}

@_cdecl("qtbus_command_set_enabled")
@usableFromInline package func _qtbus_command_set_enabled(_ command: qtbus_command, _ enabled: Int32) -> Int32 {
    entryPoint("qtbus_command_set_enabled") { setCommandEnabled(command.id, enabled != 0) }
}

@_cdecl("qtbus_command_is_executing")
@usableFromInline package func _qtbus_command_is_executing(_ command: qtbus_command) -> Int32 {
    entryPoint("qtbus_command_is_executing") { queryCommand(command.id, executing: true) }
}

@_cdecl("qtbus_command_is_enabled")
@usableFromInline package func _qtbus_command_is_enabled(_ command: qtbus_command) -> Int32 {
    entryPoint("qtbus_command_is_enabled") { queryCommand(command.id, executing: false) }
}

/// Bytes given as a pointer and a size: NULL only with a size of 0.
@inline(__always)
private func bytes(_ data: UnsafeRawPointer?, _ size: Int) throws(QTBusStatus) -> UnsafeRawPointer? {
    try ensure(
        data != nil || size == 0,
        else: fail(QTBUS_EINVAL, "data is NULL with a size of %llu", value: UInt64(UInt(bitPattern: size))))
    return data
}

@_cdecl("qtbus_execution_send")
@usableFromInline package func _qtbus_execution_send(
    _ execution: qtbus_execution, _ data: UnsafeRawPointer?, _ size: Int
) -> Int32 {
    entryPoint("qtbus_execution_send", checks: try bytes(data, size)) { sendFromExecution(execution.id, $0, size) }
}

@_cdecl("qtbus_execution_finish")
@usableFromInline package func _qtbus_execution_finish(
    _ execution: qtbus_execution, _ error: Int32,
    _ message: UnsafePointer<CChar>?
) -> Int32 {
    entryPoint("qtbus_execution_finish") { finishExecution(execution.id, error, message) }
}

@_cdecl("qtbus_command_dispose")
@usableFromInline package func _qtbus_command_dispose(_ command: qtbus_command) -> Int32 {
    entryPoint("qtbus_command_dispose") { disposeCommand(command.id) }
}
