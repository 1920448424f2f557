// SPDX-License-Identifier: MIT
// What the Swift API knows about one event type, kept once per process.
//
// A typed dispatch needs the engine type name as a C string and whether the type is a
// `QTBytesEvent`. Computing `E.eventName` (String(reflecting:)) and converting it per
// dispatch would cost far more than the dispatch itself, so each metatype gets one
// immortal `_QTTypeRecord`, made on first use. A dispatch does not look it up here: the
// engine keeps it, per bus, beside the bus's handle of the type (`info` in
// `_qtEngineDispatchSwift`), so a dispatch finds both with the engine's one lookup. This
// table, behind a lock, serves the first dispatch of a type on a bus and the calls that
// are not dispatches (subscribe, request, counting, sticky removal).
//
// Each record points to the `_QTNameInfo` of its engine name (shared by every type
// and `on(named:)` subscription using that name; see `_NameInfo.swift`).
import CQtbusShims

/// What a dispatch needs to know about one event type. Immortal, immutable.
@usableFromInline
struct _QTTypeRecord {
    /// The engine type name, NUL-terminated; nil when `eventName` is not a valid engine
    /// name (empty, over 255 bytes or holding a NUL byte), in which case every call
    /// that uses the type traps (`_qtRequireTypeName`).
    @usableFromInline let cName: UnsafePointer<CChar>?
    /// Whether the type conforms to `QTBytesEvent` (its bytes travel as the data).
    @usableFromInline let isBytes: Bool
    /// The name's info, shared by every type with this engine name.
    @usableFromInline let names: Unmanaged<_QTNameInfo>

    /// Every record made, by metatype. Records are never freed: there are finitely many
    /// types in a process, and each bus that a type was dispatched on keeps a pointer to
    /// its record.
    private static let byType = _QTLocked<[ObjectIdentifier: UnsafePointer<_QTTypeRecord>]>([:])

    /// The record of `type`, made on first use.
    @usableFromInline
    static func of<E: QTEvent>(_ type: E.Type) -> UnsafePointer<_QTTypeRecord> {
        let key = ObjectIdentifier(type)
        if let found = byType.withLock({ $0[key] }) { return found }
        // Computed outside the lock: eventName is user code.
        let names = _QTNameInfo.forName(E.eventName)
        let isBytes = E.self is any QTBytesEvent.Type
        return byType.withLock { records in
            if let found = records[key] { return found }
            let record = UnsafeMutablePointer<_QTTypeRecord>.allocate(capacity: 1)
            record.initialize(
                to: _QTTypeRecord(cName: names.cName, isBytes: isBytes, names: Unmanaged.passUnretained(names)))
            records[key] = UnsafePointer(record)
            return UnsafePointer(record)
        }
    }
}

/// Makes a NUL-terminated copy of `text` (the caller frees it with `deallocate()`).
func _qtCString(_ text: String) -> UnsafeMutablePointer<CChar> {
    var text = text
    return text.withUTF8 { utf8 in
        let copy = UnsafeMutablePointer<CChar>.allocate(capacity: utf8.count + 1)
        utf8.withMemoryRebound(to: CChar.self) { copy.initialize(from: $0.baseAddress!, count: $0.count) }
        copy[utf8.count] = 0
        return copy
    }
}
