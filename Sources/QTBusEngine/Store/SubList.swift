// SPDX-License-Identifier: MIT
// The lists of the store: a subscription's node in one list, and a list kept in delivery
// order that readers walk without a lock (Registry.swift describes the scheme).
import CQtbusShims
import CQtbusLibc

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
        if let type = wholeType { return type.field(&type.pointee.whole) }
        let entry = subtypeEntry!
        return entry.field(&entry.pointee.list)
    }
}

struct SubList {
    /// Writers only (first: see `field(_:)`).
    var tail: UnsafeMutablePointer<ListNode>? = nil
    /// Atomic: where readers start.
    var head: UnsafeMutableRawPointer? = nil
    /// Atomic, written under the lock: how many times a node was inserted or removed
    /// (or its subscription blocked or unblocked), stored after each change is published.  A type's delivery array is current while
    /// its whole list's count is the one it was built at (DeliveryArray.swift).
    var changes: UInt64 = 0

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
            qtshim_atomic_store_ptr(a.field(&a.pointee.next), UnsafeMutableRawPointer(node))
        } else {
            qtshim_atomic_store_ptr(list.field(&list.pointee.head), UnsafeMutableRawPointer(node))
        }
        counted(list)
    }

    /// One more change, stored after it (writers, under the lock): after a node was
    /// inserted or removed, or its subscription blocked or unblocked (Block.swift).
    @inline(__always)
    static func counted(_ list: UnsafeMutablePointer<SubList>) {
        let changes = list.field(&list.pointee.changes)
        qtshim_atomic_store_u64(changes, qtshim_atomic_load_u64(changes) &+ 1)
    }

    static func remove(_ list: UnsafeMutablePointer<SubList>, _ node: UnsafeMutablePointer<ListNode>) {
        let successor = node.pointee.next
        if let p = node.pointee.prev {
            qtshim_atomic_store_ptr(p.field(&p.pointee.next), successor)
        } else {
            qtshim_atomic_store_ptr(list.field(&list.pointee.head), successor)
        }
        if let s = successor {
            s.assumingMemoryBound(to: ListNode.self).pointee.prev = node.pointee.prev
        } else {
            list.pointee.tail = node.pointee.prev
        }
        counted(list)
    }
}

func forEachNode(_ list: SubList, _ body: (UnsafeMutablePointer<ListNode>) -> Void) {
    var cursor = list.head
    while let raw = cursor {
        let node = raw.assumingMemoryBound(to: ListNode.self)
        body(node)
        cursor = node.pointee.next
    }
}
