// Typed signals: where the engine keeps each type's signature.
//
// The signals themselves (signatures, packing, the typed call, the C entry points) are
// C, in Sources/CQtbusShims/signals.c: qtbus_signal_emit takes C varargs, which Swift
// cannot define, and libffi is a C library.  What they need from the engine is one slot
// per type of a bus that is set once, read by every emit and connect without a lock,
// and freed with the bus: TypeEntry.signature.
import CQtbusShims
import Glibc

@_cdecl("qtshim_signature_publish")
func _signaturePublish(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?,
                       _ signature: UnsafeMutableRawPointer?) -> Int32 {
    guard let bus = bus.map({ UnsafeMutablePointer<Bus>($0) }) else { return failNull("the bus is NULL") }
    guard let text = type, let name = CName(text), name.isValidUTF8 else { return failName(type, .type) }
    guard let signature else { return QTBUS_EINVAL.rawValue }
    return withRegistry { _, _ in
        if isClosed(bus) { return failClosed() }
        // An entry made here and left when nothing else uses the type is freed with
        // the bus, as one made by a subscribe that failed.
        guard let entry = typeEntry(bus, name) else { return QTBUS_ENOMEM.rawValue }
        if let existing = qtshim_atomic_load_ptr(entry.field(\.signature)) {
            return qtshim_signature_equal(existing, signature)
                ? 1 : fail(QTBUS_EINVAL, "the type has another signature on this bus already")
        }
        // Release: a reader that sees the pointer sees the signature's contents.
        qtshim_atomic_store_ptr(entry.field(\.signature), signature)
        return 0
    }
}

/// What `body` of qtshim_signature_use receives as its handle: the bus and the type's
/// scanned name, so an emit's dispatch does not scan and hash the name again.
struct SignatureUse {
    let bus: UnsafeMutablePointer<Bus>
    let type: CName
}

@_cdecl("qtshim_signature_use")
func _signatureUse(_ bus: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ dispatching: Bool,
                   _ body: qtshim_signature_body?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    guard let bus = bus.map({ UnsafeMutablePointer<Bus>($0) }) else { return failNull("the bus is NULL") }
    guard let text = type, let name = CName(text) else { return failName(type, .type) }
    guard let body else { return QTBUS_EINVAL.rawValue }
    // The entry and its signature stay allocated during `body` even if the bus is
    // destroyed meanwhile (a handler may destroy it).  An emit is a dispatch, so it runs
    // in a dispatch section, the one its dispatch then nests in at no cost; a connect
    // must not delay or run other threads' releases (lifetime rule 1), so a memory
    // section.  A type with a signature has an entry, so a name not found (or not valid
    // UTF-8, which no entry has) has none.
    func use() -> Int32 {
        if isClosed(bus) { return failClosed() }
        guard let entry = NameTable<TypeEntry>.lookup(qtshim_atomic_load_ptr(bus.field(\.types)), name),
              let signature = qtshim_atomic_load_ptr(entry.field(\.signature)) else {
            return fail(QTBUS_EINVAL, "the type has no signature on this bus (qtbus_signal_define)")
        }
        var handle = SignatureUse(bus: bus, type: name)
        return withUnsafeMutablePointer(to: &handle) { body(signature, context, UnsafeMutableRawPointer($0)) }
    }
    return dispatching ? withEpoch(use) : withMemoryEpoch(use)
}

/// qtbus_dispatch of an emit's packed arguments, from inside the dispatch section of
/// its qtshim_signature_use, with the checks qtbus_dispatch makes of what the caller
/// gave (the type was found already; the bytes are the emit's own).
@_cdecl("qtshim_signature_dispatch")
func _signatureDispatch(_ handle: UnsafeMutableRawPointer?, _ subtype: UnsafePointer<CChar>?,
                        _ data: UnsafeRawPointer?, _ size: Int, _ flags: UInt32) -> Int32 {
    guard let use = handle?.assumingMemoryBound(to: SignatureUse.self).pointee,
          flags & ~UInt32(QTBUS_EVENT_STICKY) == 0 else { return QTBUS_EINVAL.rawValue }
    var sub: CName? = nil
    if let subtype {
        // UTF-8 is checked by the dispatch, as for qtbus_dispatch.
        guard let s = CName(subtype) else { return QTBUS_EINVAL.rawValue }
        sub = s
    }
    var event = Outgoing(type: use.type, subtype: sub, data: data, size: size, object: nil, objectRelease: nil)
    return dispatchEvent(use.bus, &event, flags: flags)
}

/// Where EventView keeps the bytes, for the typed-handler trampoline (signals.c), which
/// reads them once per typed handler call: two loads instead of a call.
@_cdecl("qtshim_event_layout")
func _eventLayout(_ dataOffset: UnsafeMutablePointer<Int>?, _ sizeOffset: UnsafeMutablePointer<Int>?) {
    dataOffset?.pointee = MemoryLayout<EventView>.offset(of: \.data)!
    sizeOffset?.pointee = MemoryLayout<EventView>.offset(of: \.size)!
}
