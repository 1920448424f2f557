// The store: QTEventBus's dictionary of doubly linked lists plus an index.
//
//   Bus.types      name table: type name  -> TypeEntry
//   TypeEntry      .whole: list of the whole-type subscriptions
//                  .subtypes: name table: subtype name -> SubtypeEntry (.list)
//   tokens         handle table: token id -> Subscription (Bus.swift), so dispose is O(1)
//
// Every list is kept in delivery order -- priority descending, then subscription order
// -- so subscribe is O(1) at equal priority (append at the tail) and dispose is O(1)
// (unlink through prev).  Writers change lists and tables only under the registry
// lock.  Readers (the dispatch path) take no lock: they follow `next` pointers and
// table slots published with release stores, as in the Linux kernel's RCU lists.  An
// unlinked node keeps its `next`, so a reader standing on it walks on; its memory is
// freed only after the dispatches that could see it have returned (Reclamation.swift).
//
// A subscription's state machine (`live` is plain or special):
//
//   plain   a synchronous, not-ONCE subscription with its replay gate open: the only
//           state the dispatch loop's fast path has to test;
//   special queued, ONCE, or replaying (goes to plain when a replay ends, if it can).
//
//   live --dispose / bag / bus destroy (CAS, under the lock)--> disposed --+
//   live --its ONCE delivery claims it (CAS, dispatch path)---> fired -----+
//                                                                          |
//   unlinked from lists, bag and token table under the lock <--------------+
//   -> retired: after the grace period the store's pin is dropped
//   -> released: when the last pin goes (queued deliveries hold one each),
//      release(userdata) runs and the memory is freed.
//
// Only `live` subscriptions are invoked; a delivery queued before the dispose finds
// `disposed` and is dropped (lifetime rule 2).
import CQtbusShims
import Glibc

enum SubState {
    static let plain: UInt32 = 0
    static let special: UInt32 = 1
    static let fired: UInt32 = 2
    static let disposed: UInt32 = 3

    @inline(__always) static func isLive(_ state: UInt32) -> Bool { state <= special }

    @inline(__always)
    static func isLive(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        isLive(qtbus_atomic_load_u32(sub.field(\.state)))
    }

    /// Moves a live subscription to `disposed`; false when it was not live.
    static func claimForDispose(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        while true {
            let state = qtbus_atomic_load_u32(sub.field(\.state))
            guard isLive(state) else { return false }
            if qtbus_atomic_cas_u32(sub.field(\.state), state, disposed) { return true }
        }
    }
}

let subOnce = UInt32(QTBUS_SUB_ONCE)
let subReplay = UInt32(QTBUS_SUB_REPLAY)

/// One subscribe call, however many subtypes it names.  Followed in memory by
/// `nodeCount` ListNodes (one per list it is in), so the common case is one allocation.
struct Subscription {
    /// Written and read under the registry lock only; first (see `field(_:)`).
    var token: UInt64 = 0
    // Read by every dispatch that reaches the subscription.
    var state: UInt32 = SubState.special
    /// 0 while a REPLAY subscription is being replayed to (Sticky.swift).
    var gateOpen: UInt32 = 1
    var flags: UInt32
    var priority: Int32
    var handler: qtbus_handler
    var userdata: UnsafeMutableRawPointer?
    var queue: UnsafeMutablePointer<Queue>?
    // Written under the registry lock, or atomically (pins).
    /// The store's pin plus one per queued delivery; release runs when it reaches 0.
    var pins: UInt64 = 1
    var release: qtbus_release?
    var type: UnsafeMutablePointer<TypeEntry>
    var bag: UnsafeMutablePointer<Bag>? = nil
    var bagPrev: UnsafeMutablePointer<Subscription>? = nil
    var bagNext: UnsafeMutablePointer<Subscription>? = nil
    var backlog: UnsafeMutablePointer<Backlog>? = nil
    var nodeCount: Int

    @inline(__always)
    static func nodes(_ sub: UnsafeMutablePointer<Subscription>) -> UnsafeMutablePointer<ListNode> {
        (UnsafeMutableRawPointer(sub) + MemoryLayout<Subscription>.stride)
            .assumingMemoryBound(to: ListNode.self)
    }
}

/// A subscription's place in one list.
struct ListNode {
    /// Writers only (first: see `field(_:)`).
    var prev: UnsafeMutablePointer<ListNode>? = nil
    /// Atomic: readers follow it.  Left intact when the node is unlinked.
    var next: UnsafeMutableRawPointer? = nil
    var sub: UnsafeMutablePointer<Subscription>
    /// Subscription order within the type; a dispatch skips nodes newer than its start.
    var seq: UInt64
    var priority: Int32
    /// The subtype list the node is in; nil: the type's whole-type list.
    var subtype: UnsafeMutablePointer<SubtypeEntry>?
}

struct SubList {
    /// Writers only (first: see `field(_:)`).
    var tail: UnsafeMutablePointer<ListNode>? = nil
    /// Atomic: where readers start.
    var head: UnsafeMutableRawPointer? = nil

    /// Inserts after the last node of equal or higher priority (writers, under the lock).
    static func insert(_ list: UnsafeMutablePointer<SubList>, _ node: UnsafeMutablePointer<ListNode>) {
        var after = list.pointee.tail
        while let a = after, a.pointee.priority < node.pointee.priority { after = a.pointee.prev }
        node.pointee.prev = after
        let successor = after.map { $0.pointee.next } ?? list.pointee.head
        node.pointee.next = successor
        if let s = successor {
            s.assumingMemoryBound(to: ListNode.self).pointee.prev = node
        } else {
            list.pointee.tail = node
        }
        // Publish last: a reader that sees the node sees it fully initialised.
        if let a = after {
            qtbus_atomic_store_ptr(a.field(\.next), UnsafeMutableRawPointer(node))
        } else {
            qtbus_atomic_store_ptr(list.field(\.head), UnsafeMutableRawPointer(node))
        }
    }

    static func remove(_ list: UnsafeMutablePointer<SubList>, _ node: UnsafeMutablePointer<ListNode>) {
        let successor = node.pointee.next
        if let p = node.pointee.prev {
            qtbus_atomic_store_ptr(p.field(\.next), successor)
        } else {
            qtbus_atomic_store_ptr(list.field(\.head), successor)
        }
        if let s = successor {
            s.assumingMemoryBound(to: ListNode.self).pointee.prev = node.pointee.prev
        } else {
            list.pointee.tail = node.pointee.prev
        }
    }
}

protocol NamedEntry {
    var name: StoredName { get }
}

/// An event type on one bus.  Freed with its bus.
struct TypeEntry: NamedEntry {
    /// Under the registry lock (first: see `field(_:)`).
    var liveCount = 0
    let name: StoredName
    let bus: UnsafeMutablePointer<Bus>
    /// This is QTNoSubscriberEvent: its live subscriptions are counted on the bus.
    let isNoSubscriberType: Bool
    /// Atomic: the sequence number of the newest subscription; stored after its nodes
    /// are linked, so a dispatch that reads it sees every node up to it.
    var seq: UInt64 = 0
    var whole = SubList()
    /// Atomic: NameTable of SubtypeEntry, nil until the first subtype subscription.
    var subtypes: UnsafeMutableRawPointer? = nil
    var sticky = StickyStore()
}

/// A subtype of a type.  Freed (after a grace period) when its last subscription goes.
struct SubtypeEntry: NamedEntry {
    /// Under the registry lock (first: see `field(_:)`).
    var liveCount = 0
    let name: StoredName
    var list = SubList()
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

    private static func make(capacity: Int) -> UnsafeMutableRawPointer {
        let table = UnsafeMutableRawPointer.allocate(
            byteCount: slotOffset + capacity * MemoryLayout<UnsafeMutableRawPointer?>.stride,
            alignment: 16)
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
            guard let raw = qtbus_atomic_load_ptr(s + i) else { return nil }
            if raw != tombstone {
                let entry = raw.assumingMemoryBound(to: Entry.self)
                if entry.pointee.name.equals(name) { return entry }
            }
            i = (i + 1) & mask
        }
    }

    /// Adds `entry` (its name must not be present).  Writers only, under the lock.
    static func insert(_ root: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ entry: UnsafeMutablePointer<Entry>) {
        var table = root.pointee ?? {
            let t = make(capacity: 8)
            qtbus_atomic_store_ptr(root, t)
            return t
        }()
        let header = table.assumingMemoryBound(to: Header.self)
        // Keep probes short for readers: grow (dropping tombstones) past half full.
        if (header.pointee.used + 1) * 2 > header.pointee.mask + 1 {
            let live = count(table)
            let capacity = max(8, (live + 1) * 4).nextPowerOfTwo
            let grown = make(capacity: capacity)
            forEach(table) { place(grown, $0) }
            qtbus_atomic_store_ptr(root, grown)
            reclaimer.retireMemory(table) { $0?.deallocate() }
            table = grown
        }
        place(table, entry)
    }

    private static func place(_ table: UnsafeMutableRawPointer, _ entry: UnsafeMutablePointer<Entry>) {
        let header = table.assumingMemoryBound(to: Header.self)
        let s = slots(table)
        var i = Int(truncatingIfNeeded: entry.pointee.name.hash) & header.pointee.mask
        while let raw = s[i], raw != tombstone { i = (i + 1) & header.pointee.mask }
        if s[i] == nil { header.pointee.used += 1 }
        qtbus_atomic_store_ptr(s + i, UnsafeMutableRawPointer(entry))
    }

    /// Replaces `entry`'s slot with the tombstone.  Writers only, under the lock.
    static func remove(_ table: UnsafeMutableRawPointer?, _ entry: UnsafeMutablePointer<Entry>) {
        guard let table else { return }
        let mask = table.assumingMemoryBound(to: Header.self).pointee.mask
        let s = slots(table)
        var i = Int(truncatingIfNeeded: entry.pointee.name.hash) & mask
        while let raw = s[i] {
            if raw == UnsafeMutableRawPointer(entry) {
                qtbus_atomic_store_ptr(s + i, tombstone)
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
    static func free(_ table: UnsafeMutableRawPointer?) { table?.deallocate() }
}

extension Int {
    var nextPowerOfTwo: Int {
        var p = 1
        while p < self { p <<= 1 }
        return p
    }
}
