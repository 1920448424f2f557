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
//   -> retired: waits out the grace period (Reclamation.swift)
//   -> released: release(userdata) runs and the record goes back to the pool; for a
//      subscription with a queue, in a block posted to that queue, so after every
//      delivery of it that was queued (Bus.swift, `afterGracePeriod`).
//
// Only `live` subscriptions are invoked; a delivery queued before the dispose finds
// `disposed` and is dropped (lifetime rule 2).
import CQtbusShims
import Glibc

enum SubState {
    static let plain: UInt8 = 0
    static let special: UInt8 = 1
    static let fired: UInt8 = 2
    static let disposed: UInt8 = 3

    @inline(__always) static func isLive(_ state: UInt8) -> Bool { state <= special }

    @inline(__always)
    static func isLive(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        isLive(qtbus_atomic_load_u8(sub.field(\.state)))
    }

    /// Moves a live subscription to `disposed`; false when it was not live.
    static func claimForDispose(_ sub: UnsafeMutablePointer<Subscription>) -> Bool {
        while true {
            let state = qtbus_atomic_load_u8(sub.field(\.state))
            guard isLive(state) else { return false }
            if qtbus_atomic_cas_u8(sub.field(\.state), state, disposed) { return true }
        }
    }
}

let subOnce = UInt8(QTBUS_SUB_ONCE)
let subReplay = UInt8(QTBUS_SUB_REPLAY)

/// One subscribe call, however many subtypes it names: an 88-byte record of the
/// registry's pool (`SubscriptionPool`), with its first list node inline.  A token is
/// the record's pool index and generation, so a subscription costs no allocation and
/// no handle-table slot of its own (the memory target is 96 bytes a subscription).
/// A queue, further subtypes' nodes and a REPLAY backlog live in `extra`, allocated
/// only for the subscriptions that have one.
struct Subscription {
    /// The handle generation of this pool record; moves on when the subscription is
    /// unlinked, so its token is stale from then on.  Registry lock only (first: see
    /// `field(_:)`).
    var generation: UInt32
    /// The record's index in the pool, fixed for the pool's life.
    let index: UInt32
    /// Atomic: a SubState.  Read by every dispatch that reaches the subscription.
    var state: UInt8
    var flags: UInt8
    /// The inline node plus `nodeCount - 1` nodes in `extra`.
    let nodeCount: UInt16
    var priority: Int32
    /// Registry lock: the bag's slot + 1 while live and in a bag (0: none); the next
    /// free record + 1 while the record is free.
    var link: UInt32 = 0
    var handler: qtbus_handler
    var userdata: UnsafeMutableRawPointer?
    var release: qtbus_release?
    var extra: UnsafeMutablePointer<SubscriptionExtra>?
    var node: ListNode

    /// The queue deliveries run on; nil: on the dispatching thread.
    @inline(__always)
    static func queue(_ sub: UnsafeMutablePointer<Subscription>) -> UnsafeMutablePointer<Queue>? {
        sub.pointee.extra?.pointee.queue
    }

    /// The i-th node (0: the inline one).
    @inline(__always)
    static func node(_ sub: UnsafeMutablePointer<Subscription>, _ i: Int) -> UnsafeMutablePointer<ListNode> {
        i == 0 ? sub.field(\.node) : SubscriptionExtra.nodes(sub.pointee.extra!) + (i - 1)
    }

    /// The subscription a node belongs to (its index is in the low bits of `order`).
    @inline(__always)
    static func of(_ node: UnsafeMutablePointer<ListNode>) -> UnsafeMutablePointer<Subscription> {
        let i = Int(node.pointee.order & ListNode.indexMask)
        if i == 0 {
            return (UnsafeMutableRawPointer(node) - MemoryLayout<Subscription>.offset(of: \Subscription.node)!)
                .assumingMemoryBound(to: Subscription.self)
        }
        return ofExtra(node, i)
    }

    @inline(never)
    private static func ofExtra(_ node: UnsafeMutablePointer<ListNode>, _ i: Int) -> UnsafeMutablePointer<Subscription> {
        SubscriptionExtra.owner(of: node - (i - 1))
    }

    /// The subscription's event type.
    static func type(_ sub: UnsafeMutablePointer<Subscription>) -> UnsafeMutablePointer<TypeEntry> {
        let node = sub.field(\.node)
        return node.pointee.wholeType ?? node.pointee.subtypeEntry!.pointee.type
    }
}

/// What only some subscriptions need, followed in memory by `nodeCount - 1` ListNodes.
struct SubscriptionExtra {
    let sub: UnsafeMutablePointer<Subscription>
    var queue: UnsafeMutablePointer<Queue>? = nil
    var backlog: UnsafeMutablePointer<Backlog>? = nil
    /// Atomic: deliveries posted to `queue` (dispatching threads add).
    var posted: UInt64 = 0
    /// Deliveries that finished on `queue` (only the queue's thread writes it: the queue
    /// is serial).  On its own cache line, so that the two sides of a queued delivery do
    /// not pass one line back and forth on every event.
    var padding: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    var done: UInt64 = 0

    private static var nodesOffset: Int {
        (MemoryLayout<SubscriptionExtra>.stride + 15) & ~15
    }

    static func make(_ sub: UnsafeMutablePointer<Subscription>, extraNodes: Int) -> UnsafeMutablePointer<SubscriptionExtra> {
        let raw = malloc(nodesOffset + extraNodes * MemoryLayout<ListNode>.stride)!
        let extra = raw.bindMemory(to: SubscriptionExtra.self, capacity: 1)
        extra.initialize(to: SubscriptionExtra(sub: sub))
        return extra
    }

    @inline(__always)
    static func nodes(_ extra: UnsafeMutablePointer<SubscriptionExtra>) -> UnsafeMutablePointer<ListNode> {
        (UnsafeMutableRawPointer(extra) + nodesOffset).assumingMemoryBound(to: ListNode.self)
    }

    @inline(__always)
    static func owner(of firstNode: UnsafeMutablePointer<ListNode>) -> UnsafeMutablePointer<Subscription> {
        (UnsafeMutableRawPointer(firstNode) - nodesOffset).assumingMemoryBound(to: SubscriptionExtra.self).pointee.sub
    }

    static func free(_ extra: UnsafeMutablePointer<SubscriptionExtra>) {
        if let q = extra.pointee.queue { releaseQueue(q) }
        if let backlog = extra.pointee.backlog { freeBacklog(backlog) }
        extra.deinitialize(count: 1)
        Glibc.free(extra)
    }
}

/// A subscription's place in one list.
struct ListNode {
    /// Writers only (first: see `field(_:)`).
    var prev: UnsafeMutablePointer<ListNode>? = nil
    /// Atomic: readers follow it.  Left intact when the node is unlinked.
    var next: UnsafeMutableRawPointer? = nil
    /// Subscription order within the type (high 48 bits; a dispatch skips nodes newer
    /// than its start) and the node's index in its subscription (low 16 bits).
    var order: UInt64
    /// The list's owner: a TypeEntry (whole-type list), or a SubtypeEntry with bit 0 set.
    let owner: UInt

    static let indexMask: UInt64 = 0xFFFF

    init(seq: UInt64, index: Int, type: UnsafeMutablePointer<TypeEntry>) {
        order = seq << 16 | UInt64(index)
        owner = UInt(bitPattern: type)
    }

    init(seq: UInt64, index: Int, subtype: UnsafeMutablePointer<SubtypeEntry>) {
        order = seq << 16 | UInt64(index)
        owner = UInt(bitPattern: subtype) | 1
    }

    @inline(__always) var seq: UInt64 { order >> 16 }

    var wholeType: UnsafeMutablePointer<TypeEntry>? {
        owner & 1 == 0 ? UnsafeMutablePointer(bitPattern: owner) : nil
    }

    var subtypeEntry: UnsafeMutablePointer<SubtypeEntry>? {
        owner & 1 == 1 ? UnsafeMutablePointer(bitPattern: owner & ~1) : nil
    }

    /// The list the node is in.
    var list: UnsafeMutablePointer<SubList> {
        if let type = wholeType { return type.field(\.whole) }
        return subtypeEntry!.field(\.list)
    }
}

struct SubList {
    /// Writers only (first: see `field(_:)`).
    var tail: UnsafeMutablePointer<ListNode>? = nil
    /// Atomic: where readers start.
    var head: UnsafeMutableRawPointer? = nil

    /// Inserts after the last node of equal or higher priority (writers, under the lock).
    static func insert(_ list: UnsafeMutablePointer<SubList>, _ node: UnsafeMutablePointer<ListNode>) {
        var after = list.pointee.tail
        let priority = Subscription.of(node).pointee.priority
        while let a = after, Subscription.of(a).pointee.priority < priority { after = a.pointee.prev }
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

/// The pool of subscription records: chunks that never move, so a record's address
/// is stable for the registry's life; free records form a list through `link`.
/// Registry lock only.
struct SubscriptionPool {
    // 512 records of 88 bytes are exactly eleven pages (see `take`).
    private static let chunkShift = 9
    private static let chunkSize = 1 << chunkShift
    private var chunks: UnsafeMutablePointer<UnsafeMutablePointer<Subscription>>? = nil
    private var chunkCapacity = 0
    private var count = 0
    private var freeHead: UInt32 = 0

    @inline(__always)
    private func record(_ index: Int) -> UnsafeMutablePointer<Subscription> {
        chunks![index >> Self.chunkShift] + (index & (Self.chunkSize - 1))
    }

    /// A record to initialise (with the returned index and generation); nil when out of
    /// memory.
    mutating func take() -> (UnsafeMutablePointer<Subscription>, index: UInt32, generation: UInt32)? {
        if freeHead != 0 {
            let index = Int(freeHead - 1)
            let r = record(index)
            freeHead = r.pointee.link
            return (r, UInt32(index), r.pointee.generation)
        }
        if count == chunkCapacity * Self.chunkSize {
            let grown = UnsafeMutablePointer<UnsafeMutablePointer<Subscription>>.allocate(capacity: max(8, chunkCapacity * 2))
            if let old = chunks {
                grown.moveInitialize(from: old, count: chunkCapacity)
                old.deallocate()
            }
            chunks = grown
            chunkCapacity = max(8, chunkCapacity * 2)
        }
        if count & (Self.chunkSize - 1) == 0 {
            // Straight from mmap, whole pages: the memory a subscription costs is its
            // record, with no allocator header.
            guard let raw = mmap(nil, Self.chunkSize * MemoryLayout<Subscription>.stride, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), raw != MAP_FAILED else { return nil }
            chunks![count >> Self.chunkShift] = raw.bindMemory(to: Subscription.self, capacity: Self.chunkSize)
        }
        count += 1
        return (record(count - 1), UInt32(count - 1), 1)
    }

    /// Gives a released record back (its generation already moved on at unlink).
    mutating func give(_ sub: UnsafeMutablePointer<Subscription>) {
        sub.pointee.link = freeHead
        freeHead = sub.pointee.index + 1
    }

    /// The linked subscription of a token id; nil for 0, forged or stale ids.
    func lookup(_ id: UInt64) -> UnsafeMutablePointer<Subscription>? {
        let index = Int(id & 0xFFFF_FFFF)
        let generation = UInt32(truncatingIfNeeded: id >> 32)
        guard index < count, generation != 0 else { return nil }
        let r = record(index)
        return r.pointee.generation == generation ? r : nil
    }

    /// Makes the subscription's token stale (at unlink).
    static func invalidate(_ sub: UnsafeMutablePointer<Subscription>) {
        let next = sub.pointee.generation &+ 1
        sub.pointee.generation = next == 0 ? 1 : next
    }

    static func token(_ sub: UnsafeMutablePointer<Subscription>) -> UInt64 {
        UInt64(sub.pointee.generation) << 32 | UInt64(sub.pointee.index)
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
    /// Registry lock: the autoconnect shared sources of this type (SharedSources.swift).
    var sources: [UnsafeMutablePointer<SharedSource>] = []
}

/// A subtype of a type.  Freed (after a grace period) when its last subscription goes.
struct SubtypeEntry: NamedEntry {
    /// Under the registry lock (first: see `field(_:)`).
    var liveCount = 0
    let name: StoredName
    let type: UnsafeMutablePointer<TypeEntry>
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
