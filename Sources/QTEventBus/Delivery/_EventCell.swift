// SPDX-License-Identifier: MIT
// The Swift value of a typed event, carried as the engine event's `object`.
//
// A typed dispatch makes one "cell": raw memory holding a 16-byte header and the value.
// A synchronous dispatch (`dispatch`) builds it on its own stack and lends it to the
// engine (`_qtEngineDispatchSwift`), so a plain dispatch allocates nothing; only if a
// delivery outlives the call (an engine-queued subscriber, a sticky keep, a replay
// backlog) does the engine call `_qtEventCellCopy` for a heap cell. A posted dispatch
// (`dispatchOnBusQueue`, `dispatchOnMain`) starts with a heap cell. The engine releases
// every heap cell it owns with `_qtEventCellRelease`, exactly once after its last
// delivery. A raw cell rather than a Swift object: an object costs reference-count
// traffic and a deinit dispatch per event, several times a heap cell's cost (the
// dispatch rows of scripts/bench.sh's Swift benchmark show it).
//
// Header: word 0 is the value's metatype (it doubles as the type key: two Swift types
// may share an engine name, so a subscriber of `E` reads a value only from a cell whose
// key is `E`'s); word 1 is 1 when the value needs destroying (not POD). The value sits
// at `_qtCellValueOffset(E.self)`. Subscribers borrow the cell during their call and
// copy the value out only when they hop to a queue. (Layout 1 and rule 5 of
// `_Invariants.swift`.)
import CQtbusShims
import Glibc
import QTBusEngine

/// The key of the Swift type `E`: its metatype's address. A cell's word 0, and what
/// the engine finds a Swift type's handle by on a bus (`_qtEngineDispatchSwift`).
@inlinable @inline(__always)
func _qtTypeKey<E>(_: E.Type) -> UInt { UInt(bitPattern: ObjectIdentifier(E.self)) }

/// Where the value starts in a cell.
@inlinable
func _qtCellValueOffset<E>(_: E.Type) -> Int { max(16, MemoryLayout<E>.alignment) }

/// The value of type `E` that the engine event `event` carries, in place (borrowed: valid
/// during the delivery, the cell is the engine's or the dispatching frame's); nil when
/// the event carries no cell, or one of another Swift type (C and named dispatches, and
/// a type sharing `E`'s engine name). The one place a delivery reads a cell.
@inlinable @inline(__always)
func _qtCellValue<E>(_: E.Type, in event: OpaquePointer) -> UnsafeMutablePointer<E>? {
    guard let cell = _qtEngineEventObject(event), cell.load(as: UInt.self) == _qtTypeKey(E.self) else { return nil }
    return (cell + _qtCellValueOffset(E.self)).assumingMemoryBound(to: E.self)
}

/// The bytes a cell of `E` takes.
@inlinable
func _qtCellByteCount<E>(_: E.Type) -> Int { _qtCellValueOffset(E.self) + MemoryLayout<E>.size }

/// Makes a cell holding `value` (see the file comment).
@inlinable
func _qtMakeCell<E>(_ value: E) -> UnsafeMutableRawPointer {
    // malloc directly (16-aligned on Linux): the Swift allocator's path goes through
    // posix_memalign here, which costs a few ns more.
    let raw = _qtAllocateCell(byteCount: _qtCellByteCount(E.self), alignment: MemoryLayout<E>.alignment)
    _qtInitializeCell(raw, value)
    return raw
}

/// Writes the header and a copy of `value` into the cell memory at `raw` (heap, or the
/// dispatching frame's stack for a borrowed dispatch).
@inlinable
func _qtInitializeCell<E>(_ raw: UnsafeMutableRawPointer, _ value: E) {
    raw.storeBytes(of: _qtTypeKey(E.self), as: UInt.self)
    raw.storeBytes(of: _isPOD(E.self) ? 0 : 1, toByteOffset: 8, as: UInt.self)
    (raw + _qtCellValueOffset(E.self)).initializeMemory(as: E.self, repeating: value, count: 1)
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

/// The engine's copy hook for a borrowed (stack) cell: a heap cell holding a copy of
/// its value, which the engine then owns and releases with `_qtEventCellRelease`. Called
/// only when a delivery outlives the dispatch (queued, sticky, replay backlog), so the
/// unspecialized value-witness copy is not on the hot path.
let _qtEventCellCopy: _QTEngineObjectCopy = { raw in
    let raw = raw.unsafelyUnwrapped
    let type = unsafeBitCast(raw.load(as: UInt.self), to: Any.Type.self)
    return _qtCopyCell(type, raw)
}

private func _qtCopyCell<T>(_: T.Type, _ source: UnsafeMutableRawPointer) -> UnsafeMutableRawPointer {
    let offset = _qtCellValueOffset(T.self)
    let copy = _qtAllocateCell(byteCount: _qtCellByteCount(T.self), alignment: MemoryLayout<T>.alignment)
    copy.copyMemory(from: source, byteCount: 16)  // the header: type key, destroy flag
    (copy + offset).assumingMemoryBound(to: T.self)
        .initialize(from: (source + offset).assumingMemoryBound(to: T.self), count: 1)
    return copy
}

private func _qtDestroyCellValue<T>(_: T.Type, _ raw: UnsafeMutableRawPointer) {
    (raw + _qtCellValueOffset(T.self)).assumingMemoryBound(to: T.self).deinitialize(count: 1)
}
