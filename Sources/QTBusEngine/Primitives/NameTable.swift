// SPDX-License-Identifier: MIT
// The name tables of the store: types by name, and each type's subtypes by name.
import CQtbusShims
import CQtbusLibc

protocol NamedEntry {
    var name: StoredName { get }
}

/// Open-addressing hash table of entries keyed by name; readers probe without a lock.
///
/// Layout: one allocation, header then `mask + 1` slots.  A slot is nil (never used),
/// the tombstone (its entry was removed) or an entry.  Writers store into slots with
/// release stores; growth copies into a new table that is published, and the old one
/// is retired, so a reader holding either sees valid entries.
enum NameTable<Entry: NamedEntry> {
    private struct Header {
        var used: Int  // entries + tombstones; writers only (first: see `field(_:)`)
        var mask: Int
    }

    private static var tombstone: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }
    private static var slotOffset: Int { MemoryLayout<Header>.stride }

    @inline(__always)
    private static func slots(_ table: UnsafeMutableRawPointer) -> UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        (table + slotOffset).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
    }

    private static func make(capacity: Int) -> UnsafeMutableRawPointer? {
        guard let table = malloc(slotOffset + capacity * MemoryLayout<UnsafeMutableRawPointer?>.stride) else {
            return nil
        }
        table.bindMemory(to: Header.self, capacity: 1).initialize(to: Header(used: 0, mask: capacity - 1))
        slots(table).initialize(repeating: nil, count: capacity)
        return table
    }

    /// Reader-safe lookup.
    @inline(__always)
    static func lookup(_ table: UnsafeMutableRawPointer?, _ name: CName) -> UnsafeMutablePointer<Entry>? {
        guard let table else { return nil }
        let mask = table.assumingMemoryBound(to: Header.self).pointee.mask
        let s = slots(table)
        var i = Int(truncatingIfNeeded: name.hash) & mask
        while true {
            guard let raw = qtshim_atomic_load_ptr(s + i) else { return nil }
            if raw != tombstone {
                let entry = raw.assumingMemoryBound(to: Entry.self)
                if entry.pointee.name.isSame(as: name) { return entry }
            }
            i = (i + 1) & mask
        }
    }

    /// Adds `entry` (its name must not be present); false, with the table unchanged,
    /// when out of memory.  Writers only, under the lock.
    static func insert(_ root: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ entry: UnsafeMutablePointer<Entry>)
        -> Bool
    {
        guard var table = root.pointee else {
            guard let t = make(capacity: 8) else { return false }
            place(t, entry)
            qtshim_atomic_store_ptr(root, t)
            return true
        }
        let header = table.assumingMemoryBound(to: Header.self)
        // Keep probes short for readers: grow (dropping tombstones) past half full.
        if (header.pointee.used + 1) * 2 > header.pointee.mask + 1 {
            let live = count(table)
            let capacity = max(8, (live + 1) * 4).nextPowerOfTwo
            guard let grown = make(capacity: capacity) else { return false }
            forEach(table) { place(grown, $0) }
            qtshim_atomic_store_ptr(root, grown)
            reclaimer.retireMemory(table) { CQtbusLibc.free($0) }
            table = grown
        }
        place(table, entry)
        return true
    }

    private static func place(_ table: UnsafeMutableRawPointer, _ entry: UnsafeMutablePointer<Entry>) {
        let header = table.assumingMemoryBound(to: Header.self)
        let s = slots(table)
        var i = Int(truncatingIfNeeded: entry.pointee.name.hash) & header.pointee.mask
        while let raw = s[i], raw != tombstone { i = (i + 1) & header.pointee.mask }
        if s[i] == nil { header.pointee.used += 1 }
        qtshim_atomic_store_ptr(s + i, UnsafeMutableRawPointer(entry))
    }

    /// Replaces `entry`'s slot with the tombstone.  Writers only, under the lock.
    static func remove(_ table: UnsafeMutableRawPointer?, _ entry: UnsafeMutablePointer<Entry>) {
        guard let table else { return }
        let mask = table.assumingMemoryBound(to: Header.self).pointee.mask
        let s = slots(table)
        var i = Int(truncatingIfNeeded: entry.pointee.name.hash) & mask
        while let raw = s[i] {
            if raw == UnsafeMutableRawPointer(entry) {
                qtshim_atomic_store_ptr(s + i, tombstone)
                return
            }
            i = (i + 1) & mask
        }
    }

    static func forEach(_ table: UnsafeMutableRawPointer?, _ body: (UnsafeMutablePointer<Entry>) -> Void) {
        guard let table else { return }
        let mask = table.assumingMemoryBound(to: Header.self).pointee.mask
        let s = slots(table)
        for i in 0...mask {
            if let raw = s[i], raw != tombstone { body(raw.assumingMemoryBound(to: Entry.self)) }
        }
    }

    static func count(_ table: UnsafeMutableRawPointer?) -> Int {
        var n = 0
        forEach(table) { _ in n += 1 }
        return n
    }

    /// Frees the table (not its entries).  Only when no reader can hold it.
    static func free(_ table: UnsafeMutableRawPointer?) { CQtbusLibc.free(table) }
}

extension Int {
    var nextPowerOfTwo: Int {
        var p = 1
        while p < self { p <<= 1 }
        return p
    }
}
