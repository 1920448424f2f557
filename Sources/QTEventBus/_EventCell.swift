// The Swift value of a typed event, carried as the engine event's `object`.
//
// A typed dispatch makes one "cell": a raw allocation holding a 16-byte header and the
// value, handed to the engine with `_qtEventCellRelease`, which the engine calls exactly
// once after the last delivery (queued and sticky ones included), or at once if nobody
// receives the event. It is the only allocation of a plain dispatch. A raw cell rather
// than a Swift object: an object costs reference-count traffic and a deinit dispatch
// per event (measured: 37 ns against 9 ns for the cell here).
//
// Header: word 0 is the value's metatype (it doubles as the type key: two Swift types
// may share an engine name, so a subscriber of `E` reads a value only from a cell whose
// key is `E`'s); word 1 is 1 when the value needs destroying (not POD). The value sits
// at `_qtCellValueOffset(E.self)`. Subscribers borrow the cell during their call and
// copy the value out only when they hop to a queue.
import CQtbusShims
import Glibc

/// Where the value starts in a cell.
@inlinable
func _qtCellValueOffset<E>(_: E.Type) -> Int { max(16, MemoryLayout<E>.alignment) }

/// Makes a cell holding `value` (see the file comment).
@inlinable
func _qtMakeCell<E: QTEvent>(_ value: E) -> UnsafeMutableRawPointer {
    let offset = _qtCellValueOffset(E.self)
    // malloc directly (16-aligned on Linux): the Swift allocator's path goes through
    // posix_memalign here, which costs a few ns more.
    let raw = _qtAllocateCell(byteCount: offset + MemoryLayout<E>.size, alignment: MemoryLayout<E>.alignment)
    raw.storeBytes(of: UInt(bitPattern: ObjectIdentifier(E.self)), as: UInt.self)
    raw.storeBytes(of: _isPOD(E.self) ? 0 : 1, toByteOffset: 8, as: UInt.self)
    (raw + offset).initializeMemory(as: E.self, repeating: value, count: 1)
    return raw
}

/// Allocates a cell (freed with `free`).
@usableFromInline
func _qtAllocateCell(byteCount: Int, alignment: Int) -> UnsafeMutableRawPointer {
    if alignment <= 16, let raw = malloc(byteCount) { return raw }
    var raw: UnsafeMutableRawPointer? = nil
    guard posix_memalign(&raw, max(alignment, 16), byteCount) == 0, let raw else {
        fatalError("qtbus: out of memory allocating an event")
    }
    return raw
}

/// Frees a cell that was never handed to the engine (a failed dispatch).
@usableFromInline
func _qtFreeCell(_ raw: UnsafeMutableRawPointer) {
    _qtEventCellRelease(raw)
}

/// The engine's object_release for cells.
let _qtEventCellRelease: qtbus_release = { raw in
    let raw = raw.unsafelyUnwrapped
    if raw.load(fromByteOffset: 8, as: UInt.self) != 0 {
        let type = unsafeBitCast(raw.load(as: UInt.self), to: Any.Type.self)
        _qtDestroyCellValue(type, raw)
    }
    free(raw)
}

private func _qtDestroyCellValue<T>(_: T.Type, _ raw: UnsafeMutableRawPointer) {
    (raw + _qtCellValueOffset(T.self)).assumingMemoryBound(to: T.self).deinitialize(count: 1)
}
