// SPDX-License-Identifier: MIT
// The delivery array: a type's whole list copied into an array of (handler, userdata),
// so that a plain dispatch with no subtype calls each handler after one load, where the
// list costs three (docs/perf-notes.md, "The delivery array").  Made by the second
// dispatch that finds none current (`TypeEntry.delivery.askedAt`), replaced when the
// list changes, and left by the walk for the list as soon as the list moves under it.
import CQtbusShims
import CQtbusLibc

/// A type's whole list as an array (`TypeEntry.delivery.array`): the handler and userdata of
/// each of its subscriptions, in delivery order, and each one's node, where a dispatch
/// goes on by the list once the list changed.  Made when every subscription in the list
/// is direct (`count` -1: some are not, and the list is walked).  Immutable once
/// published; replaced ones are retired (`retireMemory`).
struct DeliveryArray {
    let changes: UInt64
    let count: Int
    /// The largest subscription sequence among the entries: a dispatch that read an
    /// older sequence when it started walks the list instead, where `visit` leaves out
    /// what was subscribed after it started (and what its thread has not yet been
    /// shown to see, for ThreadSanitizer, by the subscribe's release of the type).
    let newest: UInt64

    struct Entry {
        let handler: qtbus_handler
        let userdata: UnsafeMutableRawPointer?
    }

    static func size(_ count: Int) -> Int {
        MemoryLayout<DeliveryArray>.stride + count
            * (MemoryLayout<Entry>.stride + MemoryLayout<UnsafeMutableRawPointer>.stride)
    }
}

extension UnsafeMutablePointer where Pointee == DeliveryArray {
    @inline(__always)
    var entries: UnsafeMutablePointer<DeliveryArray.Entry> {
        (UnsafeMutableRawPointer(self) + MemoryLayout<DeliveryArray>.stride).assumingMemoryBound(
            to: DeliveryArray.Entry.self)
    }
    @inline(__always)
    func nodes(capacity: Int) -> UnsafeMutablePointer<UnsafeMutablePointer<ListNode>> {
        (UnsafeMutableRawPointer(entries) + capacity * MemoryLayout<DeliveryArray.Entry>.stride)
            .assumingMemoryBound(to: UnsafeMutablePointer<ListNode>.self)
    }
}

/// The plain walk of a type's whole list (no subtype list, nothing reported), by its
/// delivery array (above): per handler, one load of the list's change count
/// and the call, where the list costs a node's order, its subscription's state and the
/// next pointer (docs/perf-notes.md, "The delivery array").  The array is the list as
/// it was at `changes`, used by dispatches that started after its newest subscription
/// (`start`); before each call the count is read again, and once it moved (a
/// handler, or another thread, subscribed or disposed) the walk goes on by the list
/// from the next entry's node, with `visit`'s checks: what the list walk would do from
/// there, since a node stays allocated, its `next` intact, while this dispatch runs.
@inline(never)
func deliverArray(_ type: UnsafeMutablePointer<TypeEntry>, _ event: inout Outgoing, _ start: UInt64) -> Int32 {
    let changes = qtshim_atomic_load_u64(type.field(&type.pointee.whole.changes))
    var raw = qtshim_atomic_load_ptr(type.field(&type.pointee.delivery.array))
    if raw == nil || raw.unsafelyUnwrapped.assumingMemoryBound(to: DeliveryArray.self).pointee.changes != changes {
        // The first dispatch at this count only asks for it (TypeEntry.delivery.askedAt).
        if qtshim_atomic_load_u64(type.field(&type.pointee.delivery.askedAt)) != changes {
            qtshim_atomic_store_u64(type.field(&type.pointee.delivery.askedAt), changes)
            return deliver(type, nil, &event, start, Plain.self)
        }
        raw = makeDeliveryArray(type, changes, raw)
    }
    guard let array = raw?.assumingMemoryBound(to: DeliveryArray.self), array.pointee.count >= 0,
        array.pointee.newest <= start
    else {
        return deliver(type, nil, &event, start, Plain.self)
    }
    var view = EventView(event)
    let n = array.pointee.count
    let entries = array.entries
    let changesField = type.field(&type.pointee.whole.changes)
    // Unprotected: handlers get the view as a const pointer, and a stack protector is a
    // guard set and checked on every dispatch that reaches a handler (docs/perf-notes.md,
    // "The delivery array").
    return _withUnprotectedUnsafeMutablePointer(to: &view) { view in
        // Every entry passed was called: the count is how far the walk went.
        var i = 0
        while i != n {
            if qtshim_atomic_load_u64(changesField) != changes {
                var count = Int32(truncatingIfNeeded: i)
                walkList(from: array.nodes(capacity: n)[i], view, &event, start << 16 | ListNode.indexMask, &count)
                return count
            }
            entries[i].handler(OpaquePointer(view), entries[i].userdata)
            i &+= 1
            if view.pointee.stopped {
                event.stopped = true
                break
            }
        }
        return Int32(truncatingIfNeeded: i)
    }
}

/// The rest of a plain walk by the list, from `node` on.
@inline(never)
private func walkList(
    from node: UnsafeMutablePointer<ListNode>, _ view: UnsafeMutablePointer<EventView>,
    _ event: inout Outgoing, _ last: UInt64, _ count: inout Int32
) {
    var w: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(node)
    while let wr = w {
        let wn = wr.assumingMemoryBound(to: ListNode.self)
        if visit(wn, view, &event, last, &count, false, nil) { return }
        w = qtshim_atomic_load_ptr(wn.field(&wn.pointee.next))
    }
}

/// Makes and publishes the delivery array of `type`'s whole list at `changes`, in
/// place of `old`; nil when memory ran out, the list changed meanwhile or another
/// dispatch published one first (this dispatch then walks the list).
@inline(never)
private func makeDeliveryArray(
    _ type: UnsafeMutablePointer<TypeEntry>, _ changes: UInt64,
    _ old: UnsafeMutableRawPointer?
) -> UnsafeMutableRawPointer? {
    // Count the direct subscriptions; any routed one (queued, ONCE, replaying, owned)
    // makes the array a marker that the list is walked.  Fired and disposed ones are
    // left out: their dispose or delivery has begun, and their unlink moves `changes`;
    // so are blocked ones, whose block and last unblock move it too (Block.swift).
    var n = 0
    var eligible = true
    var w = qtshim_atomic_load_ptr(type.field(&type.pointee.whole.head))
    while let wr = w {
        let node = wr.assumingMemoryBound(to: ListNode.self)
        let sub = Subscription.of(node)
        let state = qtshim_atomic_load_u8(sub.field(&sub.pointee.state))
        if state == SubState.routed {
            eligible = false
            break
        }
        if state == SubState.direct { n += 1 }
        w = qtshim_atomic_load_ptr(node.field(&node.pointee.next))
    }
    if !eligible { n = 0 }
    guard let raw = malloc(DeliveryArray.size(n)) else { return nil }
    let array = raw.bindMemory(to: DeliveryArray.self, capacity: 1)
    var filled = 0
    var newest: UInt64 = 0
    if eligible {
        let entries = array.entries
        let nodes = array.nodes(capacity: n)
        w = qtshim_atomic_load_ptr(type.field(&type.pointee.whole.head))
        while let wr = w, filled < n {
            let node = wr.assumingMemoryBound(to: ListNode.self)
            let sub = Subscription.of(node)
            if qtshim_atomic_load_u8(sub.field(&sub.pointee.state)) == SubState.direct {
                (entries + filled).initialize(
                    to: DeliveryArray.Entry(handler: sub.pointee.handler, userdata: sub.pointee.userdata))
                (nodes + filled).initialize(to: node)
                // The field itself: `seq` would copy the node, `next` (stored by writers) too.
                newest = max(newest, node.pointee.order >> 16)
                filled += 1
            }
            w = qtshim_atomic_load_ptr(node.field(&node.pointee.next))
        }
    }
    array.initialize(to: DeliveryArray(changes: changes, count: eligible ? filled : -1, newest: newest))
    // Only an array of the list as it still is, in place of the one this dispatch saw.
    var expected = old
    guard filled == n, qtshim_atomic_load_u64(type.field(&type.pointee.whole.changes)) == changes,
        qtshim_atomic_cas_ptr(type.field(&type.pointee.delivery.array), &expected, raw)
    else {
        free(raw)
        return nil
    }
    if let old { reclaimer.retireMemory(old) { free($0) } }
    return raw
}
