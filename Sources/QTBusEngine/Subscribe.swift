// Subscribing, and counting subscriptions: a record from the pool, its nodes linked into
// their lists in delivery order, all under the registry lock.
import CQtbusShims
import Glibc

// MARK: - Subscribe

struct SubscribeRequest {
    var type: CName
    var subtypes: [CName]
    var queue: UnsafeMutablePointer<Queue>?
    var bag: UInt64
    var priority: Int32
    var flags: UInt32
    var handler: qtbus_handler
    var userdata: UnsafeMutableRawPointer?
    var release: qtbus_release?
}

/// Subscribes; arguments were validated by the caller, except the type name's UTF-8,
/// which is checked here only when the type is new.  Returns the token id or a
/// negative status.  On failure nothing was changed and `release` was not called.
func subscribe(_ bus: UnsafeMutablePointer<Bus>, _ request: SubscribeRequest) -> Int64 {
    withEpoch {
        var replay: [UnsafeMutablePointer<Payload>] = []
        var made: UnsafeMutablePointer<Subscription>? = nil
        var sources: [UnsafeMutablePointer<SharedSource>] = []
        let status: Int64 = registry.withLock { state in
            if isClosed(bus) { return Int64(QTBUS_ECLOSED.rawValue) }
            var bag: UnsafeMutablePointer<Bag>? = nil
            if request.bag != 0 {
                guard let b = state.bags.lookup(request.bag) else { return Int64(QTBUS_ESTALE.rawValue) }
                bag = b
            }
            // A name equal to a stored one was validated when it was stored.
            if NameTable<TypeEntry>.lookup(bus.pointee.types, request.type) == nil && !request.type.isValidUTF8 {
                return Int64(QTBUS_EINVAL.rawValue)
            }
            let type = typeEntry(bus, request.type)
            let seq = type.pointee.seq + 1
            guard let (sub, index, generation) = state.pool.take() else { return Int64(QTBUS_ENOMEM.rawValue) }
            let flags = UInt8(truncatingIfNeeded: request.flags)
            let nodeCount = max(1, request.subtypes.count)
            let plain = request.queue == nil && flags & (subOnce | subReplay) == 0
            let first = request.subtypes.first.map { ListNode(seq: seq, index: 0, subtype: subtypeEntry(type, $0)) }
                ?? ListNode(seq: seq, index: 0, type: type)
            sub.initialize(to: Subscription(
                generation: generation, index: index, state: plain ? SubState.plain : SubState.special,
                flags: flags, nodeCount: UInt16(nodeCount), priority: request.priority,
                handler: request.handler, userdata: request.userdata, release: request.release,
                extra: nil, node: first))
            if nodeCount > 1 || flags & subReplay != 0 || request.queue != nil {
                sub.pointee.extra = SubscriptionExtra.make(sub, extraNodes: nodeCount - 1)
            }
            if let q = request.queue {
                retainQueue(q)
                sub.pointee.extra!.pointee.queue = q
            }
            if flags & subReplay != 0 {
                // Shut before the nodes are published (Sticky.swift explains the gate).
                sub.pointee.extra!.pointee.backlog = makeBacklog()
            }
            for i in 1..<nodeCount {
                Subscription.node(sub, i).initialize(
                    to: ListNode(seq: seq, index: i, subtype: subtypeEntry(type, request.subtypes[i])))
            }
            for i in 0..<nodeCount {
                let node = Subscription.node(sub, i)
                SubList.insert(node.pointee.list, node)
                node.pointee.subtypeEntry?.pointee.liveCount += 1
            }
            // After the links: a dispatch that reads this sequence sees the nodes.
            qtbus_atomic_store_u64(type.field(\.seq), seq)
            type.pointee.liveCount += 1
            if type.pointee.liveCount == 1 && !type.pointee.sources.isEmpty {
                typeLivenessChanged(&state, type, live: true)
                sources = state.takeSourcesToRun()
            }
            if type.pointee.isNoSubscriberType {
                _ = qtbus_atomic_fetch_add_u64(bus.field(\.noSubscriberListeners), 1)
            }
            if let b = bag { bagLink(b, slot: UInt32(truncatingIfNeeded: request.bag), sub) }
            if flags & subReplay != 0 {
                replay = collectReplay(type, request.subtypes)
            }
            made = sub
            return Int64(bitPattern: SubscriptionPool.token(sub))
        }
        // Autoconnect first: a start that dispatches at once reaches this subscriber.
        runSources(sources)
        if status >= 0, let sub = made, sub.pointee.flags & subReplay != 0 { runReplay(sub, replay) }
        return status
    }
}

func tokenIsActive(_ id: UInt64) -> Bool {
    registry.withLock { state in
        guard let sub = state.pool.lookup(id) else { return false }
        return SubState.isLive(sub)
    }
}

// MARK: - Counting

func subscriberCount(_ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ subtype: CName?) -> Int32 {
    registry.withLock { _ in
        if isClosed(bus) { return QTBUS_ECLOSED.rawValue }
        guard let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, type) else { return 0 }
        guard let subtype else { return Int32(entry.pointee.liveCount) }
        let specific = NameTable<SubtypeEntry>.lookup(entry.pointee.subtypes, subtype)?.pointee.liveCount ?? 0
        var whole = 0
        forEachNode(entry.pointee.whole) { _ in whole += 1 }
        return Int32(specific + whole)
    }
}
