// SPDX-License-Identifier: MIT
// Typed signals: where the engine keeps each type's signature, and how an emit's packed
// arguments are dispatched.
//
// The C half (Sources/CQtbusShims/signals.c) makes signatures, packs and unpacks
// arguments and calls typed handlers, through libffi; qtbus_signal_emit, whose varargs
// Swift cannot take, is there too and calls the engine once.  What signals need of the
// engine is one slot per type of a bus that is set once, read by every emit and connect
// without a lock, and freed with the bus: TypeEntry.signature.  The calls here go one way,
// engine to C: a signature is found here, then C packs into memory this frame owns, and
// the dispatch starts here.
import CQtbusShims
import CQtbusLibc

/// qtbus_signal_define: makes a signature of `count` `kinds` (checked) the one of `type`
/// on `bus`; defining an equal one again is QTBUS_OK.
func defineSignal(
    _ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ kinds: UnsafePointer<qtbus_arg>?,
    _ count: Int
) -> Int32 {
    // Where a typed handler finds the bytes of the event it is given (signals.c reads
    // them in place; every connect follows a define).
    qtshim_signals_event_layout(
        MemoryLayout<EventView>.offset(of: \.data)!,
        MemoryLayout<EventView>.offset(of: \.size)!)
    var made: UnsafeMutableRawPointer? = nil
    let status = qtshim_signature_make(kinds, count, &made)
    guard status == QTBUS_OK.rawValue, let signature = made else { return status }
    let published: Int32 = withRegistry { _, _ in
        if isClosed(bus) { return failClosed() }
        // An entry made here and left when nothing else uses the type is freed with
        // the bus, as one made by a subscribe that failed.
        guard let entry = typeEntry(bus, type) else { return QTBUS_ENOMEM.rawValue }
        if let existing = qtshim_atomic_load_ptr(entry.field(&entry.pointee.signature)) {
            return qtshim_signature_equal(existing, signature)
                ? 1 : fail(QTBUS_EINVAL, "the type has another signature on this bus already")
        }
        // Release: a reader that sees the pointer sees the signature's contents.
        qtshim_atomic_store_ptr(entry.field(&entry.pointee.signature), signature)
        return 0
    }
    if published != 0 { qtshim_signature_release(signature) }
    return published == 1 ? QTBUS_OK.rawValue : published
}

/// `body(type's entry, its signature)`; in a section, so the entry and its signature
/// stay allocated during `body` even if the bus is destroyed meanwhile (a handler may
/// destroy it).  A type with a signature has an entry, so a name not found (or not valid
/// UTF-8, which no entry has) has none.
@inline(__always)
private func withSignature(
    _ bus: UnsafeMutablePointer<Bus>, _ type: CName,
    _ body: (UnsafeMutablePointer<TypeEntry>, UnsafeMutableRawPointer) -> Int32
) -> Int32 {
    if isClosed(bus) { return failClosed() }
    guard let entry = NameTable<TypeEntry>.lookup(qtshim_atomic_load_ptr(bus.field(&bus.pointee.types)), type),
        let signature = qtshim_atomic_load_ptr(entry.field(&entry.pointee.signature))
    else {
        return fail(QTBUS_EINVAL, "the type has no signature on this bus (qtbus_signal_define)")
    }
    return body(entry, signature)
}

/// The kinds of `type`'s signature on `bus`, copied into `out` (room for
/// QTBUS_SIGNAL_MAX_ARGS), and their count; -1 when the type has none on this bus (or the
/// bus is closed).  Reports nothing: its caller, the Swift API, checks an emit's
/// arguments with it and traps in its own words.  In a memory section, as
/// `withSignature`'s callers are.
func signatureKinds(_ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ out: UnsafeMutablePointer<UInt8>) -> Int {
    if isClosed(bus) { return -1 }
    guard let entry = NameTable<TypeEntry>.lookup(qtshim_atomic_load_ptr(bus.field(&bus.pointee.types)), type),
        let signature = qtshim_atomic_load_ptr(entry.field(&entry.pointee.signature))
    else { return -1 }
    return qtshim_signature_kinds(signature, out)
}

/// qtbus_signal_connect, in a memory section (a connect must not delay or run other
/// threads' releases): `subscribe` is called with the handler, userdata and release of
/// a subscription that calls `fn` with the arguments of `type`'s signature.
func connectSignal(
    _ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ fn: @convention(c) () -> Void,
    _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?,
    subscribe: (qtbus_handler, UnsafeMutableRawPointer, qtbus_release) -> Int32
) -> Int32 {
    withSignature(bus, type) { _, signature in
        guard let connection = qtshim_connection_make(signature, fn, userdata, release) else {
            return QTBUS_ENOMEM.rawValue
        }
        let status = subscribe(qtshim_connection_handler, connection, qtshim_connection_release)
        if status != QTBUS_OK.rawValue { qtshim_connection_discard(connection) }
        return status
    }
}

/// What an emit gives as arguments: `count` values, or qtbus_signal_emit's va_list
/// (signals.c reads it by the signature's kinds).
enum SignalArguments {
    case values(UnsafePointer<qtbus_value>?, Int)
    case varargs(UnsafeMutableRawPointer)
}

/// `send(type's entry, bytes, size)` of `arguments` packed for `type`'s signature, while
/// they are this thread's current emit: the typed handlers `send` reaches use the call
/// prepared once here.  In a dispatch section (an emit is a dispatch).
@inline(__always)
func withPackedArguments(
    _ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ arguments: SignalArguments,
    _ send: (UnsafeMutablePointer<TypeEntry>, UnsafeRawPointer, Int) -> Int32
) -> Int32 {
    withSignature(bus, type) { entry, signature in
        // Not initialized: signals.c writes what it reads.
        withUnsafeTemporaryAllocation(byteCount: Int(QTSHIM_EMIT_SIZE), alignment: 16) { emit in
            var bytes: UnsafeRawPointer? = nil
            var size = 0
            let packed =
                switch arguments {
                case .values(let values, let count):
                    qtshim_emit_begin(emit.baseAddress, signature, values, count, nil, &bytes, &size)
                case .varargs(let list):
                    qtshim_emit_begin(emit.baseAddress, signature, nil, 0, list, &bytes, &size)
                }
            guard packed == QTBUS_OK.rawValue else { return packed }
            let status = send(entry, bytes.unsafelyUnwrapped, size)
            qtshim_emit_end(emit.baseAddress)
            return status
        }
    }
}

/// qtbus_signal_emit and qtbus_signal_emitv: `arguments` packed, then dispatched with
/// the checks qtbus_dispatch makes of what the caller gave (the bytes are the emit's
/// own).  The dispatch starts from the type's entry, found with the signature.
func emitSignal(
    _ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ arguments: SignalArguments,
    subtype: UnsafePointer<CChar>?, flags: UInt32
) -> Int32 {
    withPackedArguments(bus, type, arguments) { entry, bytes, size in
        guard flags & ~stickyFlag == 0 else {
            return fail(QTBUS_EINVAL, "unknown flag bits 0x%llx in flags", value: UInt64(flags & ~stickyFlag))
        }
        var sub: CName? = nil
        if let subtype {
            // UTF-8 is checked by the dispatch, as for qtbus_dispatch.
            guard let s = CName(subtype) else { return failName(subtype, .subtype) }
            sub = s
        }
        var event = Outgoing(type: type, subtype: sub, data: bytes, size: size, object: nil, objectRelease: nil)
        // An emit gives no headers; it inherits as any dispatch.
        return withHeaders(nil, flags: 0, currentRecord()) { headers in
            event.headers = headers
            return dispatchResolved(bus, entry, &event, flags: flags)
        }
    }
}

/// qtbus_event_args: the arguments `event`'s bytes carry, into `out`.
func signalArguments(
    _ event: UnsafeMutablePointer<EventView>, _ out: UnsafeMutablePointer<qtbus_value>?,
    _ count: Int
) -> Int32 {
    let size = event.pointee.size
    return qtshim_event_args(size > 0 ? event.pointee.data : nil, size, out, count)
}
