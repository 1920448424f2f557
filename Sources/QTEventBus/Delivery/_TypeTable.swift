// Per-type facts the dispatch path needs, found by metatype without a lock.
//
// A typed dispatch needs the engine type name as a C string. Computing
// `E.eventName` (String(reflecting:)) and converting it per dispatch would cost far more
// than the dispatch itself, so each metatype gets one immortal `_QTTypeRecord`, found
// through an open-addressing table keyed by the metatype's address:
//   - readers (every dispatch) load the table pointer and the slot keys with acquire
//     loads and never write: no lock, no reference count, nothing shared is written;
//   - writers (the first use of a type) insert under `tableLock`: the value word is
//     stored before its key is published with a release store, and a table that fills
//     past half is copied into one twice the size, published the same way. Old tables
//     stay allocated (readers may still be probing them); their total is bounded by the
//     size of the last one.
// Records and tables are never freed: there are finitely many types in a process.
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
    /// The records made before this one: where each bus keeps this type's engine id
    /// (`_TypeIds.swift`).
    @usableFromInline let index: UInt32
}

@usableFromInline
enum _QTTypeTable {
    /// The current table, published with release stores (nil until the first insert):
    /// word 0 is the mask (capacity - 1), then `capacity` pairs of words (key =
    /// metatype address or 0, value = record pointer). A global with a constant
    /// initializer, so reading it costs no lazy-initialization check; only ever
    /// accessed atomically, so the dynamic exclusivity check is off.
    @exclusivity(unchecked) nonisolated(unsafe) static var head: UnsafeMutableRawPointer? = nil
    /// Guards inserts; its value is the number of keys in the current table.
    static let tableLock = _QTLocked<Int>(0)

    private static func makeTable(capacity: Int) -> UnsafeMutableRawPointer {
        let words = UnsafeMutablePointer<UInt>.allocate(capacity: 1 + 2 * capacity)
        words.initialize(repeating: 0, count: 1 + 2 * capacity)
        words[0] = UInt(capacity - 1)
        return UnsafeMutableRawPointer(words)
    }

    @inline(__always)
    private static func slot(_ i: UInt) -> Int { 1 + 2 * Int(i) }

    @inline(__always)
    private static func hash(_ key: UInt) -> UInt {
        // Metadata addresses are 16-aligned; mix the rest.
        ((key >> 4) &* 0x9e37_79b9_7f4a_7c15) >> 29
    }

    /// The record of `type`, made on first use.
    @inlinable
    static func record<E: QTEvent>(for type: E.Type) -> UnsafePointer<_QTTypeRecord> {
        let key = UInt(bitPattern: ObjectIdentifier(type))
        if let found = find(key) { return found }
        return insert(type)
    }

    /// Lock-free lookup (see the file comment).
    @usableFromInline
    static func find(_ key: UInt) -> UnsafePointer<_QTTypeRecord>? {
        guard let current = qtshim_atomic_load_ptr(&head) else { return nil }
        let table = current.assumingMemoryBound(to: UInt.self)
        let mask = table[0]
        var i = hash(key) & mask
        while true {
            let keyWord = UnsafeMutableRawPointer(table + slot(i)).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            let k = UInt(bitPattern: qtshim_atomic_load_ptr(keyWord))
            if k == key {
                // Stored before the key was published (release); the acquire above orders it.
                return UnsafePointer(bitPattern: table[slot(i) + 1])
            }
            if k == 0 { return nil }
            i = (i &+ 1) & mask
        }
    }

    @usableFromInline
    static func insert<E: QTEvent>(_ type: E.Type) -> UnsafePointer<_QTTypeRecord> {
        // Computed outside the lock: eventName is user code.
        let name = E.eventName
        let isBytes = E.self is any QTBytesEvent.Type
        let key = UInt(bitPattern: ObjectIdentifier(type))
        let names = _QTNameInfo.forName(name)
        return tableLock.withLock { count in
            if let found = find(key) { return found }
            let record = UnsafeMutablePointer<_QTTypeRecord>.allocate(capacity: 1)
            record.initialize(to: _QTTypeRecord(cName: names.cName, isBytes: isBytes,
                                                names: Unmanaged.passUnretained(names),
                                                index: UInt32(truncatingIfNeeded: count)))
            guard let current = qtshim_atomic_load_ptr(&head) else {
                let table = makeTable(capacity: 64)
                place(table.assumingMemoryBound(to: UInt.self), key: key, value: UInt(bitPattern: record), publish: false)
                qtshim_atomic_store_ptr(&head, table)
                count = 1
                return UnsafePointer(record)
            }
            var table = current.assumingMemoryBound(to: UInt.self)
            if 2 * (count + 1) > Int(table[0]) + 1 {
                // Grow: fill the new table privately, then publish it.
                let bigger = makeTable(capacity: 2 * (Int(table[0]) + 1)).assumingMemoryBound(to: UInt.self)
                for i in 0...table[0] where table[slot(i)] != 0 {
                    place(bigger, key: table[slot(i)], value: table[slot(i) + 1], publish: false)
                }
                qtshim_atomic_store_ptr(&head, UnsafeMutableRawPointer(bigger))
                table = bigger
            }
            place(table, key: key, value: UInt(bitPattern: record), publish: true)
            count += 1
            return UnsafePointer(record)
        }
    }

    private static func place(_ table: UnsafeMutablePointer<UInt>, key: UInt, value: UInt, publish: Bool) {
        var i = hash(key) & table[0]
        while table[slot(i)] != 0 { i = (i &+ 1) & table[0] }
        table[slot(i) + 1] = value
        let keyWord = UnsafeMutableRawPointer(table + slot(i)).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
        if publish {
            qtshim_atomic_store_ptr(keyWord, UnsafeMutableRawPointer(bitPattern: key))
        } else {
            keyWord.pointee = UnsafeMutableRawPointer(bitPattern: key)
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
