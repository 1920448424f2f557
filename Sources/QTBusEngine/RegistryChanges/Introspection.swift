// SPDX-License-Identifier: MIT
// qtbus_bus_foreach: a snapshot of a bus's live subscriptions, taken under the registry
// lock into one allocation (names copied, so a destroy or dispose afterwards cannot pull
// them away), then handed to the caller's function with no lock held.
//
// Order: type by type (in the table's order), and within a type in dispatch order:
// priority, highest first, then subscription order.  A subscription that names several
// subtypes is listed once (by its first node), with all its subtypes.
import CQtbusShims
import CQtbusLibc

/// The snapshot: `count` infos, then the subtype pointer arrays, then the names, in
/// one allocation (`free` gives it back).
struct SubscriptionSnapshot {
    let infos: UnsafeMutablePointer<qtbus_sub_info>
    let count: Int
    fileprivate let raw: UnsafeMutableRawPointer

    func free() { CQtbusLibc.free(raw) }
}

/// The live subscriptions of `type`, in dispatch order.
private func subscriptions(of type: UnsafeMutablePointer<TypeEntry>) -> Vector<UnsafeMutablePointer<Subscription>>? {
    var subs = Vector<UnsafeMutablePointer<Subscription>>()
    var ok = true
    func take(_ list: SubList) {
        forEachNode(list) { node in
            guard ok, node.pointee.order & ListNode.indexMask == 0 else { return }
            let sub = Subscription.of(node)
            guard SubState.isLive(sub) else { return }
            if !subs.tryAppend(sub) { ok = false }
        }
    }
    take(type.pointee.whole)
    NameTable<SubtypeEntry>.forEach(type.pointee.subtypes) { take($0.pointee.list) }
    guard ok else {
        subs.free()
        return nil
    }
    if subs.count > 1 {
        qsort(subs.base!, subs.count, MemoryLayout<UnsafeMutablePointer<Subscription>>.stride) { a, b in
            let x = a!.load(as: UnsafeMutablePointer<Subscription>.self)
            let y = b!.load(as: UnsafeMutablePointer<Subscription>.self)
            if x.pointee.priority != y.pointee.priority { return x.pointee.priority > y.pointee.priority ? -1 : 1 }
            return x.pointee.node.seq < y.pointee.node.seq ? -1 : (x.pointee.node.seq > y.pointee.node.seq ? 1 : 0)
        }
    }
    return subs
}

/// Takes the snapshot; nil when out of memory.  Under the registry lock.
private func takeSnapshot(_ bus: UnsafeMutablePointer<Bus>) -> SubscriptionSnapshot? {
    // Per type: its subscriptions, sorted; then one allocation for everything.
    var perType = Vector<(UnsafeMutablePointer<TypeEntry>, Vector<UnsafeMutablePointer<Subscription>>)>()
    defer {
        perType.forEach { entry in
            var subs = entry.1
            subs.free()
        }
        perType.free()
    }
    var ok = true
    func take(_ type: UnsafeMutablePointer<TypeEntry>) {
        guard ok, type.pointee.liveCount > 0 else { return }
        guard let subs = subscriptions(of: type) else {
            ok = false
            return
        }
        if !perType.tryAppend((type, subs)) {
            var s = subs
            s.free()
            ok = false
        }
    }
    // Types, then patterns (whose entries are listed under their pattern).
    NameTable<TypeEntry>.forEach(bus.pointee.types, take)
    NameTable<TypeEntry>.forEach(bus.pointee.patterns, take)
    guard ok else { return nil }

    var count = 0, pointers = 0, names = 0
    perType.forEach { (type, subs) in
        names += type.pointee.name.length + 1
        subs.forEach { sub in
            count += 1
            let n = Int(sub.pointee.nodeCount)
            for i in 0..<n {
                guard let entry = Subscription.node(sub, i).pointee.subtypeEntry else { continue }
                pointers += 1
                names += entry.pointee.name.length + 1
            }
        }
    }
    let infoBytes = count * MemoryLayout<qtbus_sub_info>.stride
    let pointerBytes = pointers * MemoryLayout<UnsafePointer<CChar>?>.stride
    guard let raw = malloc(max(1, infoBytes + pointerBytes + names)) else { return nil }
    let infos = raw.bindMemory(to: qtbus_sub_info.self, capacity: max(count, 1))
    var nextPointer = (raw + infoBytes).bindMemory(to: UnsafePointer<CChar>?.self, capacity: max(pointers, 1))
    var nextName = (raw + infoBytes + pointerBytes).assumingMemoryBound(to: CChar.self)
    func copy(_ name: StoredName) -> UnsafePointer<CChar> {
        let at = nextName
        memcpy(at, name.bytes, name.length + 1)
        nextName += name.length + 1
        return UnsafePointer(at)
    }
    var i = 0
    perType.forEach { (type, subs) in
        let typeName = copy(type.pointee.name)
        subs.forEach { sub in
            let first = nextPointer
            var subtypeCount = 0
            for k in 0..<Int(sub.pointee.nodeCount) {
                guard let entry = Subscription.node(sub, k).pointee.subtypeEntry else { continue }
                nextPointer.initialize(to: copy(entry.pointee.name))
                nextPointer += 1
                subtypeCount += 1
            }
            (infos + i).initialize(
                to: qtbus_sub_info(
                    token: qtbus_token(id: SubscriptionPool.token(sub)), type: typeName,
                    subtypes: subtypeCount > 0 ? UnsafePointer(first) : nil, subtype_count: subtypeCount,
                    priority: sub.pointee.priority, flags: UInt32(sub.pointee.flags),
                    queued: Subscription.queue(sub) != nil ? 1 : 0, in_bag: sub.pointee.bagOrFreeLink != 0 ? 1 : 0))
            i += 1
        }
    }
    return SubscriptionSnapshot(infos: infos, count: count, raw: raw)
}

/// The snapshot of `bus`'s live subscriptions (qtbus_bus_foreach), or a negative
/// status (QTBUS_ECLOSED, QTBUS_ENOMEM).  Inside a memory section: the bus stays
/// allocated; what the snapshot holds is its own.
func snapshotSubscriptions(_ bus: UnsafeMutablePointer<Bus>) -> Result<SubscriptionSnapshot, QTBusStatus> {
    withRegistry { _, _ in
        if isClosed(bus) { return .failure(QTBusStatus(failClosed())) }
        guard let snapshot = takeSnapshot(bus) else { return .failure(QTBusStatus(QTBUS_ENOMEM.rawValue)) }
        return .success(snapshot)
    }
}

/// A negative status as an Error, for `Result`.
struct QTBusStatus: Error {
    let value: Int32
    init(_ value: Int32) { self.value = value }
}
