// SPDX-License-Identifier: MIT
// The C boundary of typed signals (qtbus.h, "Typed signals"), in the shape of every other
// entry point (CEntry.swift); the engine's half is Features/Signals.swift, the C half
// (signatures, packing, the typed call through libffi) Sources/CQtbusShims/signals.c.
// qtbus_signal_emit is defined in C, since Swift cannot define a variadic function; it
// hands its va_list to `_qtbus_signal_emit` below in one call.
import CQtbusShims
import CQtbusLibc

/// qtbus_signal_define's type, once the rest of its arguments are checked.
private func definedType(
    _ type: UnsafePointer<CChar>?, _ kinds: UnsafePointer<qtbus_arg>?,
    _ count: Int
) throws(QTBusStatus) -> CName {
    let text = try required(type, "the type name is NULL")
    // A size_t: a "negative" count is a huge one.
    try ensure(
        UInt(bitPattern: count) <= UInt(QTBUS_SIGNAL_MAX_ARGS),
        else: fail(
            QTBUS_EINVAL, "count is %llu (QTBUS_SIGNAL_MAX_ARGS is 16)",
            value: UInt64(UInt(bitPattern: count))))
    try ensure(kinds != nil || count == 0, else: failNull("args is NULL with a count"))
    for i in 0..<count {
        let kind = kinds.unsafelyUnwrapped[i].rawValue
        try ensure(
            kind >= QTBUS_ARG_INT32.rawValue && kind <= QTBUS_ARG_POINTER.rawValue,
            else: fail(QTBUS_EINVAL, "args[%llu] is not a qtbus_arg kind", value: UInt64(i)))
    }
    return try checkedName(text, .type)
}

@_cdecl("qtbus_signal_define")
@usableFromInline package func _qtbus_signal_define(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ args: UnsafePointer<qtbus_arg>?, _ count: Int
) -> Int32 {
    entryPoint("qtbus_signal_define", bus: bus, checks: try definedType(type, args, count)) {
        defineSignal($0, $1, args, count)
    }
}

@_cdecl("qtbus_signal_connect")
@usableFromInline package func _qtbus_signal_connect(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ options: UnsafePointer<qtbus_sub_options>?,
    _ handler: (@convention(c) () -> Void)?,
    _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
    _ tokenOut: UnsafeMutablePointer<qtbus_token>?
) -> Int32 {
    tokenOut?.pointee = qtbus_token(id: 0)
    // Not `bus:`: the handler is checked before the bus.  A connect is a qtbus_subscribe,
    // whose failures are reported as that call's, inside this one's.
    return entryPoint(
        "qtbus_signal_connect", on: bus, .memory, nested: true,
        checks: (
            fn: try required(handler, "the handler is NULL"), bus: try checkedBus(bus),
            type: try scannedName(type, .type)
        )
    ) { checked in
        connectSignal(checked.bus, checked.type, checked.fn, userdata, release) { handler, connection, drop in
            _qtbus_subscribe(bus, type, options, handler, connection, drop, tokenOut)
        }
    }
}

/// qtbus_signal_emit (signals.c) with its va_list.
@_cdecl("qtshim_signal_emit_va")
func _qtbus_signal_emit(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ subtype: UnsafePointer<CChar>?,
    _ varargs: UnsafeMutableRawPointer?
) -> Int32 {
    entryPoint("qtbus_signal_emit", bus: bus, .dispatch, checks: try scannedName(type, .type)) {
        emitSignal($0, $1, .varargs(varargs.unsafelyUnwrapped), subtype: subtype, flags: 0)
    }
}

@_cdecl("qtbus_signal_emitv")
@usableFromInline package func _qtbus_signal_emitv(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ subtype: UnsafePointer<CChar>?, _ flags: UInt32,
    _ args: UnsafePointer<qtbus_value>?, _ count: Int
) -> Int32 {
    entryPoint("qtbus_signal_emitv", bus: bus, .dispatch, checks: try scannedName(type, .type)) {
        emitSignal($0, $1, .values(args, count), subtype: subtype, flags: flags)
    }
}

@_cdecl("qtbus_signal_requestv")
@usableFromInline package func _qtbus_signal_requestv(
    _ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
    _ subtype: UnsafePointer<CChar>?,
    _ args: UnsafePointer<qtbus_value>?, _ count: Int,
    _ onReply: qtbus_reply_handler?,
    _ userdata: UnsafeMutableRawPointer?,
    _ release: qtbus_release?
) -> Int32 {
    // A typed request is a qtbus_request of the packed arguments: its failures are
    // reported as that call's, inside this one's.
    entryPoint("qtbus_signal_requestv", bus: bus, .dispatch, nested: true, checks: try scannedName(type, .type)) {
        withPackedArguments($0, $1, .values(args, count)) { _, bytes, size in
            var desc = qtbus_event_desc(
                type: type, subtype: subtype, data: bytes, size: size, object: nil,
                object_release: nil, flags: 0, headers: nil, header_count: 0)
            return _qtbus_request(bus, &desc, onReply, userdata, release)
        }
    }
}

@_cdecl("qtbus_event_args")
@usableFromInline package func _qtbus_event_args(
    _ event: OpaquePointer?, _ argsOut: UnsafeMutablePointer<qtbus_value>?,
    _ count: Int
) -> Int32 {
    entryPoint("qtbus_event_args", checks: try argumentsEvent(event, argsOut, count)) {
        signalArguments($0, argsOut, count)
    }
}

/// qtbus_event_args's event, with somewhere to put `count` arguments.
@inline(__always)
private func argumentsEvent(
    _ event: OpaquePointer?, _ argsOut: UnsafeMutablePointer<qtbus_value>?,
    _ count: Int
) throws(QTBusStatus) -> UnsafeMutablePointer<EventView> {
    let view = try checkedEvent(event)
    try ensure(argsOut != nil || count == 0, else: failNull("args_out is NULL with a count"))
    return view
}
