// SPDX-License-Identifier: MIT
// The typed dispatch path, from the event to the engine, and the one call into the
// engine's dispatch entry points (`_qtSend`).
//
// The typed path is @inlinable so that it is specialized for the event type in the
// caller's module: the subtype read then compiles to a few loads. A synchronous dispatch
// is one engine call, `_qtEngineDispatchSwift`, which makes the dispatch's one type
// lookup (this bus's handle of the type, by its metatype) and dispatches, asking for a
// bytes event's bytes on the way (`_qtWithEventBytes`, inside its section, entering
// nothing again). It declines only the first dispatch of a type on a bus, with nothing
// done: `_qtSendFirst` registers the type's record (`_TypeRecord.swift`) with the engine
// and then dispatches, two calls one after the other. It allocates nothing: the event
// cell is on its stack, lent to the engine, which copies it only for deliveries that
// outlive the call (_EventCell.swift); a subtype of up to 15 UTF-8 bytes is passed from
// the stack, longer native strings in place. It takes no lock and builds no C string for
// the type name (the record caches it). Posted dispatches find the record with the same
// engine lookup and use C's `qtbus_dispatch_on_bus_queue` / `_on_main`.
import CQtbusShims
import Glibc
import QTBusEngine

/// Where a dispatch runs.
@usableFromInline
enum _QTSendMode {
    case now, busQueue, main
}

/// One event on its way to the engine: what `_qtSend` hands to one of the engine's
/// dispatch entry points.
@usableFromInline
struct _QTOutgoing {
    /// The engine bus.
    @usableFromInline let bus: OpaquePointer
    /// This bus's handle of the event's type (`_qtLearnType`), for a borrowed cell; nil:
    /// by `typeName`.
    @usableFromInline var type: OpaquePointer?
    /// The engine type name, NUL-terminated (nil only before `_qtSendFirst` sets it).
    @usableFromInline var typeName: UnsafePointer<CChar>?
    /// The subtype, NUL-terminated, or nil; with the UTF-8 length of the Swift string it
    /// was made from (a borrowed dispatch leaves the NUL check to the engine, which
    /// compares the two).
    @usableFromInline var subType: UnsafePointer<CChar>? = nil
    @usableFromInline var subTypeLength = 0
    /// The bytes C code reads, NUL-terminated (the NUL not counted), or nil.
    @usableFromInline var data: UnsafeRawPointer? = nil
    @usableFromInline var size = 0
    /// The event's cell (_EventCell.swift); nil for a named event.
    @usableFromInline let cell: UnsafeMutableRawPointer?
    /// Whether `cell` is on the dispatching frame's stack and lent to the engine for the
    /// call (`.now` only, from `_qtSendFirst`); otherwise the engine owns the cell once
    /// the dispatch succeeds.
    @usableFromInline let borrowed: Bool
    /// QTBUS_EVENT_STICKY or 0.
    @usableFromInline let flags: UInt32
    @usableFromInline let mode: _QTSendMode

    @inlinable
    init(
        bus: OpaquePointer, type: OpaquePointer? = nil, typeName: UnsafePointer<CChar>?, cell: UnsafeMutableRawPointer?,
        borrowed: Bool, flags: UInt32, mode: _QTSendMode
    ) {
        self.bus = bus
        self.type = type
        self.typeName = typeName
        self.cell = cell
        self.borrowed = borrowed
        self.flags = flags
        self.mode = mode
    }

    /// Calls `send` with this event, `subType` its subtype (none when nil), and returns
    /// what it returns; nil, without calling it, when `subType` holds a NUL byte (a
    /// borrowed event leaves that check to the engine).
    @inlinable
    func withSubType(_ subType: String?, _ send: (_QTOutgoing) -> Int32) -> Int32? {
        guard let subType else { return send(self) }
        return _qtWithSubType(subType, borrowed) { subType, length in
            var event = self
            event.subType = subType
            event.subTypeLength = length
            return send(event)
        }
    }
}

extension QTEventBus {
    @inlinable
    func _send<E: QTEvent>(_ event: E, flags: UInt32, mode: _QTSendMode) -> Int32 {
        guard mode == .now else {
            // Posted: the whole event outlives this call, so its cell is on the heap.
            let record =
                _qtEngineSwiftTypeInfo(raw, key: _qtTypeKey(E.self))?.assumingMemoryBound(to: _QTTypeRecord.self)
                ?? _qtLearnType(E.self, on: raw).record
            // An invalid eventName: `_qtRefusedDispatch` says so.
            guard let cName = record.pointee.cName else { return QTBUS_EINVAL.rawValue }
            return _qtSendTyped(
                event, record.pointee.isBytes,
                _QTOutgoing(
                    bus: raw, typeName: cName, cell: _qtMakeCell(event), borrowed: false,
                    flags: flags, mode: mode))
        }
        // Synchronous: the cell lives in this frame and the engine borrows it; it asks
        // `_qtEventCellCopy` for a heap copy only if a delivery outlives the call.
        return withUnsafeTemporaryAllocation(
            byteCount: _qtCellByteCount(E.self),
            alignment: max(16, MemoryLayout<E>.alignment)
        ) { buffer in
            let cell = buffer.baseAddress.unsafelyUnwrapped
            _qtInitializeCell(cell, event)
            defer { (cell + _qtCellValueOffset(E.self)).assumingMemoryBound(to: E.self).deinitialize(count: 1) }
            guard let subType = event.eventSubType else { return _sendBorrowed(event, cell, nil, 0, flags) }
            // The engine checks the subtype for a NUL byte against its length.
            let length = subType.utf8.count
            return subType.withCString { _sendBorrowed(event, cell, $0, length, flags) }
        }
    }

    /// The synchronous dispatch of `value` in `cell`: one engine call, which makes the
    /// one type lookup and dispatches (asking `_qtWithEventBytes` for a bytes event's
    /// bytes on the way), but for the first dispatch of `E` on this bus, which it
    /// declines with nothing done: `_qtSendFirst` then registers `E` and dispatches.
    @inlinable @inline(__always)
    func _sendBorrowed<E: QTEvent>(
        _ value: E, _ cell: UnsafeMutableRawPointer, _ subType: UnsafePointer<CChar>?,
        _ subTypeLength: Int, _ flags: UInt32
    ) -> Int32 {
        let status = _qtEngineDispatchSwift(
            raw, key: _qtTypeKey(E.self), subtype: subType, subtypeLength: subTypeLength,
            object: cell, flags: flags
        ) { dispatch in
            _qtWithEventBytes(value, dispatch)
        }
        guard status == _qtEngineTypeNotLearned else { return status }
        return _qtSendFirst(value, raw, cell, subType, subTypeLength, flags)
    }
}

/// A bytes event's bytes, made inside its dispatch's section and handed to the rest of
/// it (`_qtEngineDispatchSwift`'s `bytes`): the engine asks only for a type registered
/// as a bytes event, where a cast on every dispatch would cost the others
/// (docs/perf-notes.md, "One engine call per Swift dispatch"). Out of line (specialized
/// all the same).
@inlinable @inline(never)
func _qtWithEventBytes<E: QTEvent>(_ value: E, _ dispatch: (UnsafeRawPointer?, Int) -> Int32) -> Int32 {
    guard let bytesEvent = value as? any QTBytesEvent else { return dispatch(nil, 0) }
    return _withNULTerminated(bytesEvent.eventBytes) { dispatch(UnsafeRawPointer($0), $1) }
}

/// The first synchronous dispatch of `E` on this bus: `E` registered (its record, the
/// engine's handle of it), then dispatched, two engine calls one after the other and
/// neither inside the other. Out of line (specialized all the same).
@inlinable @inline(never)
func _qtSendFirst<E: QTEvent>(
    _ value: E, _ bus: OpaquePointer, _ cell: UnsafeMutableRawPointer,
    _ subType: UnsafePointer<CChar>?, _ subTypeLength: Int, _ flags: UInt32
) -> Int32 {
    var event = _QTOutgoing(bus: bus, typeName: nil, cell: cell, borrowed: true, flags: flags, mode: .now)
    event.subType = subType
    event.subTypeLength = subTypeLength
    let record: UnsafePointer<_QTTypeRecord>
    (event.type, record) = _qtLearnType(E.self, on: bus)
    // An invalid eventName: `_qtRefusedDispatch` says so.
    guard let cName = record.pointee.cName else { return QTBUS_EINVAL.rawValue }
    event.typeName = cName
    return _qtSendData(value, record.pointee.isBytes, event)
}

/// The first dispatch of `E` on `bus`: `E`'s record, registered with the engine, and
/// this bus's handle of `E` (nil when its name is not valid, the bus is closed or out of
/// memory: the dispatch then fails, by name).
@usableFromInline @inline(never)
func _qtLearnType<E: QTEvent>(_: E.Type, on bus: OpaquePointer)
    -> (type: OpaquePointer?, record: UnsafePointer<_QTTypeRecord>)
{
    let record = _QTTypeRecord.of(E.self)
    guard let cName = record.pointee.cName else { return (nil, record) }
    let type = _qtEngineLearnSwiftType(
        bus, key: _qtTypeKey(E.self), name: cName, info: UnsafeRawPointer(record),
        copy: _qtEventCellCopy, release: _qtEventCellRelease, withData: record.pointee.isBytes)
    return (type, record)
}

/// Sends `value` as `event` (posted), with its subtype and, if `isBytes`, its bytes.
@inlinable
func _qtSendTyped<E: QTEvent>(_ value: E, _ isBytes: Bool, _ event: _QTOutgoing) -> Int32 {
    event.withSubType(value.eventSubType) { _qtSendData(value, isBytes, $0) } ?? _qtRefuseUnsent(event)
}

/// Sends `value` as `event`, with its bytes if `isBytes` (a ``QTBytesEvent``).
@inlinable
func _qtSendData<E: QTEvent>(_ value: E, _ isBytes: Bool, _ event: _QTOutgoing) -> Int32 {
    if isBytes, let bytesEvent = value as? any QTBytesEvent { return _qtSendBytes(event, bytes: bytesEvent.eventBytes) }
    return _qtSend(event)
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
func _qtRefuseUnsent(_ event: _QTOutgoing) -> Int32 {
    if !event.borrowed, let cell = event.cell { _qtFreeCell(cell) }
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
/// makes no second `strlen` (docs/perf-notes.md, "The subtype's NUL check").
@inlinable @inline(__always)
func _qtWithSubType<R>(_ subType: String, _ borrowed: Bool, _ body: (UnsafePointer<CChar>, Int) -> R) -> R? {
    let length = subType.utf8.count
    if borrowed { return subType.withCString { body($0, length) } }
    return _qtWithCName(subType) { body($0, length) }
}

/// Sends `event` with `bytes` as the data, NUL-terminated (not counted).
@inlinable @inline(__always)
func _qtSendBytes(_ event: _QTOutgoing, bytes: [UInt8]) -> Int32 {
    _withNULTerminated(bytes) { base, count in
        var event = event
        event.data = UnsafeRawPointer(base)
        event.size = count
        return _qtSend(event)
    }
}

/// The one call into the engine's dispatch entry points but `_qtEngineDispatchSwift`,
/// which makes most synchronous typed dispatches. A borrowed cell (on the caller's
/// stack, `.now` only, from `_qtSendFirst`) goes to `_qtEngineDispatchBorrowed`, which
/// copies it if a delivery outlives the call, with
/// `event.type` (nil: none) standing for the type name, and checks the subtype against
/// its length; the engine owns any other cell once the dispatch succeeds, and on failure
/// it took nothing, so the cell is freed here.
@usableFromInline
func _qtSend(_ event: _QTOutgoing) -> Int32 {
    if event.borrowed, let cell = event.cell {
        return _qtEngineDispatchBorrowed(
            event.bus, type: event.type, typeName: event.typeName, subtype: event.subType,
            subtypeLength: event.subTypeLength, data: event.data, size: event.size,
            object: cell, copy: _qtEventCellCopy, release: _qtEventCellRelease,
            flags: event.flags)
    }
    return _qtSendDescribed(event)
}

/// `_qtSend` through C's entry points (apart: the descriptor's address, taken, would
/// cost the borrowed path a stack protector).
@inline(never)
private func _qtSendDescribed(_ event: _QTOutgoing) -> Int32 {
    var desc = qtbus_event_desc(
        type: event.typeName, subtype: event.subType, data: event.data, size: event.size,
        object: event.cell, object_release: event.cell == nil ? nil : _qtEventCellRelease,
        flags: event.flags, headers: nil, header_count: 0)
    let status: Int32
    switch event.mode {
    case .now: status = _qtbus_dispatch(event.bus, &desc)
    case .busQueue: status = _qtbus_dispatch_on_bus_queue(event.bus, &desc)
    case .main: status = _qtbus_dispatch_on_main(event.bus, &desc)
    }
    if status < 0, let cell = event.cell { _qtFreeCell(cell) }
    return status
}
