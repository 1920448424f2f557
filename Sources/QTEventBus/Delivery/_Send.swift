// The typed dispatch path, from the event to the engine, and the one call into the
// engine's dispatch entry points (`_qtSend`).
//
// The typed path is @inlinable so that it is specialized for the event type in the
// caller's module: the metatype lookup, the bytes check and the subtype read then
// compile to a few loads. A synchronous dispatch allocates nothing: the event cell is
// on its stack, lent to the engine, which copies it only for deliveries that outlive
// the call (_EventCell.swift); a subtype of up to 15 UTF-8 bytes is passed from the
// stack, longer native strings in place. It takes no lock and builds no C string for
// the type name (the record caches it). The engine call is the Swift-only
// `_qtEngineDispatchBorrowed`, which runs the same dispatch as C's `qtbus_dispatch`;
// posted dispatches use C's `qtbus_dispatch_on_bus_queue` / `_on_main`.
import CQtbusShims
import Glibc
import QTBusEngine

/// Where a dispatch runs.
@usableFromInline
enum _QTSendMode {
    case now, busQueue, main
}

extension QTEventBus {
    @inlinable
    func _send<E: QTEvent>(_ event: E, flags: UInt32, mode: _QTSendMode) -> Int32 {
        let record = _QTTypeTable.record(for: E.self)
        // An invalid eventName: `_qtRefusedDispatch` says so.
        guard let cName = record.pointee.cName else { return QTBUS_EINVAL.rawValue }
        let isBytes = record.pointee.isBytes
        guard mode == .now else {
            // Posted: the whole event outlives this call, so its cell is on the heap.
            return _qtSendCell(event, isBytes, cName, _qtMakeCell(event), borrowed: false, typeId: 0, flags, mode)
        }
        // Synchronous: the cell lives in this frame and the engine borrows it; it asks
        // `_qtEventCellCopy` for a heap copy only if a delivery outlives the call. The
        // type goes by its id on this bus (`_TypeIds.swift`).
        let typeId = typeIds.id(record, bus: raw)
        return withUnsafeTemporaryAllocation(byteCount: _qtCellByteCount(E.self),
                                             alignment: max(16, MemoryLayout<E>.alignment)) { buffer in
            let cell = buffer.baseAddress.unsafelyUnwrapped
            _qtInitializeCell(cell, event)
            defer { (cell + _qtCellValueOffset(E.self)).assumingMemoryBound(to: E.self).deinitialize(count: 1) }
            return _qtSendCell(event, isBytes, cName, cell, borrowed: true, typeId: typeId, flags, mode)
        }
    }

    @inlinable
    func _qtSendCell<E: QTEvent>(_ event: E, _ isBytes: Bool, _ cName: UnsafePointer<CChar>,
                                 _ cell: UnsafeMutableRawPointer, borrowed: Bool, typeId: UInt64, _ flags: UInt32,
                                 _ mode: _QTSendMode) -> Int32 {
        if isBytes, let bytesEvent = event as? any QTBytesEvent {
            return _qtSendBytes(raw, cName, event.eventSubType, bytesEvent.eventBytes, cell, borrowed, typeId, flags, mode)
        }
        guard let subType = event.eventSubType else {
            return _qtSend(raw, cName, nil, 0, nil, 0, cell, borrowed, typeId, flags, mode)
        }
        return _qtWithSubType(subType, borrowed) { _qtSend(raw, cName, $0, $1, nil, 0, cell, borrowed, typeId, flags, mode) }
            ?? _qtRefuseUnsent(cell, borrowed)
    }
}

/// The refusal of a typed dispatch, `mode`'s: the programmer error (an invalid subtype or
/// type name) or what the engine said; traps. Out of line, off the hot path.
@usableFromInline @inline(never)
func _qtRefusedDispatch<E: QTEvent>(_ event: E, _ status: Int32, _ mode: _QTSendMode) -> Never {
    let call: String
    switch mode {
    case .now: call = "dispatch(_:sticky:)"
    case .busQueue: call = "dispatchOnBusQueue(_:sticky:)"
    case .main: call = "dispatchOnMain(_:sticky:)"
    }
    _ = _qtRequireTypeName(E.self, call)
    let ofType = "\(call) of \(String(reflecting: E.self))"
    if let subType = event.eventSubType { _qtRequireName(subType, .subtype, ofType) }
    _qtRefused(ofType, status)
}

/// A refusal before the engine call (a name holding a NUL byte): the engine took nothing,
/// so a cell that is not borrowed is freed here, and the caller reports it.
@usableFromInline
func _qtRefuseUnsent(_ cell: UnsafeMutableRawPointer?, _ borrowed: Bool) -> Int32 {
    if !borrowed, let cell { _qtFreeCell(cell) }
    return QTBUS_EINVAL.rawValue
}

/// Calls `body` with `name` as a C string, or returns nil when `name` holds a NUL byte:
/// the C string would end there, and the engine would take the shorter name for it.
/// Costs a `strlen` of the copy `withCString` makes anyway.
@inlinable @inline(__always)
func _qtWithCName<R>(_ name: String, _ body: (UnsafePointer<CChar>) -> R) -> R? {
    name.withCString { c in strlen(c) == name.utf8.count ? body(c) : nil }
}

/// `_qtWithCName` for a dispatch's subtype, with its UTF-8 length. A borrowed dispatch
/// (`_qtEngineDispatchBorrowed`) leaves the NUL check to the engine, which compares the
/// length with the one it measures anyway: the synchronous dispatch, the hot path, then
/// makes no second `strlen` (30 instructions of about 700 a dispatch with a subtype).
@inlinable @inline(__always)
func _qtWithSubType<R>(_ subType: String, _ borrowed: Bool, _ body: (UnsafePointer<CChar>, Int) -> R) -> R? {
    let length = subType.utf8.count
    if borrowed { return subType.withCString { body($0, length) } }
    return _qtWithCName(subType) { body($0, length) }
}

/// Sends with `bytes` as the data, NUL-terminated (not counted).
@usableFromInline
func _qtSendBytes(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: String?, _ bytes: [UInt8],
                  _ object: UnsafeMutableRawPointer?, _ borrowed: Bool, _ typeId: UInt64, _ flags: UInt32,
                  _ mode: _QTSendMode) -> Int32 {
    _withNULTerminated(bytes) { base, count in
        guard let subType else { return _qtSend(bus, type, nil, 0, base, count, object, borrowed, typeId, flags, mode) }
        return _qtWithSubType(subType, borrowed && object != nil) {
            _qtSend(bus, type, $0, $1, base, count, object, borrowed, typeId, flags, mode)
        } ?? _qtRefuseUnsent(object, borrowed)
    }
}

/// The one call into the engine's dispatch entry points. A `borrowed` cell (on the
/// caller's stack, `.now` only) goes to `_qtEngineDispatchBorrowed`, which copies it if
/// a delivery outlives the call, with `typeId` (0: none) standing for `type`, and checks
/// the subtype against `subTypeLength` (its Swift string's UTF-8 length); the engine
/// owns any other cell once the dispatch succeeds, and on failure it took nothing, so
/// the cell is freed here.
@usableFromInline
func _qtSend(_ bus: OpaquePointer, _ type: UnsafePointer<CChar>, _ subType: UnsafePointer<CChar>?, _ subTypeLength: Int,
             _ data: UnsafeRawPointer?, _ size: Int, _ object: UnsafeMutableRawPointer?, _ borrowed: Bool,
             _ typeId: UInt64, _ flags: UInt32, _ mode: _QTSendMode) -> Int32 {
    if borrowed, let object {
        return _qtEngineDispatchBorrowed(bus, typeId: typeId, type: type, subtype: subType, subtypeLength: subTypeLength,
                                        data: data, size: size, object: object,
                                        copy: _qtEventCellCopy, release: _qtEventCellRelease, flags: flags)
    }
    var desc = qtbus_event_desc(type: type, subtype: subType, data: data, size: size, object: object,
                                object_release: object == nil ? nil : _qtEventCellRelease, flags: flags)
    let status: Int32
    switch mode {
    case .now: status = _qtbus_dispatch(bus, &desc)
    case .busQueue: status = _qtbus_dispatch_on_bus_queue(bus, &desc)
    case .main: status = _qtbus_dispatch_on_main(bus, &desc)
    }
    if status < 0, let object { _qtFreeCell(object) }
    return status
}
