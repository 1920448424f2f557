// SPDX-License-Identifier: MIT
// Subscribing, and counting subscriptions: a record from the pool, its nodes linked into
// their lists in delivery order, all in one critical section of the registry lock.
import CQtbusShims
import CQtbusLibc

// MARK: - Subscribe

struct SubscribeRequest {
    var type: CName
    /// Distinct names; the caller owns the vector.
    var subtypes: Vector<CName>
    var queue: UnsafeMutablePointer<Queue>?
    var bag: UInt64
    var priority: Int32
    var flags: UInt32
    var handler: qtbus_handler
    var userdata: UnsafeMutableRawPointer?
    var release: qtbus_release?
    /// Swift's freeWith: the subscription ends when its owner is gone (Owners.swift).
    var owner: OwnerCheck? = nil
}

/// Subscribes; arguments were validated by the caller, except the type name's UTF-8,
/// which is checked here only when the type is new.  Returns the token id or a
/// negative status.  On failure nothing was changed and `release` was not called.
/// Autoconnect sources the subscription wakes are started, and a REPLAY subscription's
/// replay is delivered, after the unlock and before this returns, in that order: a
/// start that dispatches at once reaches the new subscriber.
func subscribe(_ bus: UnsafeMutablePointer<Bus>, _ request: SubscribeRequest) -> Int64 {
    // A REPLAY subscribe delivers its replay after the unlock: that is a dispatch, and
    // its section is entered before the lock, so the new subscription outlives a
    // concurrent dispose until the replay is over.  Otherwise only the bus needs to
    // stay allocated (rule 1: nothing but dispatches delays a release).
    if request.flags & UInt32(subReplay) != 0 { return withEpoch { subscribeLocked(bus, request) } }
    return withMemoryEpoch { subscribeLocked(bus, request) }
}

private func subscribeLocked(_ bus: UnsafeMutablePointer<Bus>, _ request: SubscribeRequest) -> Int64 {
    withRegistry { state, after in
        if isClosed(bus) { return Int64(failClosed()) }
        var bag: UnsafeMutablePointer<Bag>? = nil
        if request.bag != 0 {
            guard let b = state.bags.lookup(request.bag) else { return Int64(failStaleBag()) }
            bag = b
        }
        // A name equal to a stored one was validated when it was stored.
        let pattern = request.flags & UInt32(QTBUS_SUB_PATTERN) != 0
        let table = pattern ? bus.pointee.patterns : bus.pointee.types
        if NameTable<TypeEntry>.lookup(table, request.type) == nil && !request.type.isValidUTF8 {
            return Int64(failName(request.type.bytes, .type))
        }
        guard let type = pattern ? patternEntry(bus, request.type) : typeEntry(bus, request.type),
            let sub = makeSubscription(&state, type, request, bag)
        else { return Int64(QTBUS_ENOMEM.rawValue) }
        link(sub, type, &after)
        if let b = bag { linkToBag(b, slot: UInt32(truncatingIfNeeded: request.bag), sub) }
        if sub.pointee.flags & subReplay != 0 { after.call(deliverReplay, UnsafeMutableRawPointer(sub)) }
        let token = SubscriptionPool.token(sub)
        if qtshim_probe_subscribe_enabled() { qtshim_probe_subscribe(bus, type.pointee.name.bytes, token) }
        if let note = traceNote(QTBUS_TRACE_SUBSCRIBE, type, token: token) { after.note(note) }
        return Int64(bitPattern: token)
    }
}

/// A pool record initialised for `request`, with its nodes, not yet in any list (the
/// next subscription sequence of `type`), and room for its token in `bag`; nil when
/// out of memory.  Every allocation comes before the record is taken, and what they
/// leave on failure is invisible: empty subtype entries, spare room in the bag.
private func makeSubscription(
    _ state: inout RegistryState, _ type: UnsafeMutablePointer<TypeEntry>,
    _ request: SubscribeRequest, _ bag: UnsafeMutablePointer<Bag>?
) -> UnsafeMutablePointer<Subscription>? {
    let flags = UInt8(truncatingIfNeeded: request.flags)
    let nodeCount = max(1, request.subtypes.count)
    var firstSubtype: UnsafeMutablePointer<SubtypeEntry>? = nil
    for i in 0..<request.subtypes.count {
        guard let entry = subtypeEntry(type, request.subtypes[i]) else { return nil }
        if i == 0 { firstSubtype = entry }
    }
    if let bag, !bag.pointee.tokens.reserve(1) { return nil }
    var extraRaw: UnsafeMutableRawPointer? = nil
    if nodeCount > 1 || flags & subReplay != 0 || request.queue != nil || request.owner != nil {
        extraRaw = SubscriptionExtra.allocate(extraNodes: nodeCount - 1)
        if extraRaw == nil { return nil }
    }
    var backlog: UnsafeMutablePointer<Backlog>? = nil
    if flags & subReplay != 0 {
        // Shut, holding the kept events to replay, before the nodes are published: in
        // this critical section, so no sticky dispatch comes between (StickyReplay.swift).
        guard
            var kept = type.pointee.patterns.isPattern
                ? keptForPattern(type, request.subtypes)
                : type.pointee.sticky.matching(request.subtypes)
        else {
            free(extraRaw)
            return nil
        }
        backlog = makeBacklog(replaying: kept)
        if backlog == nil {
            kept.forEach { $0.release() }  // the store still holds each: no user code runs
            kept.free()
            free(extraRaw)
            return nil
        }
    }
    guard let (sub, index, generation) = state.pool.take() else {
        if let backlog { freeBacklog(backlog) }
        free(extraRaw)
        return nil
    }

    // Pattern subscriptions of all patterns in one sequence: they are delivered in
    // subscription order across patterns.
    let seq =
        type.pointee.patterns.isPattern
        ? type.pointee.bus.pointee.patternSeq + 1 : (type.pointee.seq & ~TypeEntry.hasOwned) + 1
    let direct = request.queue == nil && request.owner == nil && flags & (subOnce | subReplay) == 0
    let first =
        firstSubtype.map { ListNode(seq: seq, index: 0, subtype: $0) } ?? ListNode(seq: seq, index: 0, type: type)
    sub.initialize(
        to: Subscription(
            generation: generation, index: index, state: direct ? SubState.direct : SubState.routed,
            flags: flags, nodeCount: UInt16(nodeCount), priority: request.priority,
            handler: request.handler, userdata: request.userdata, release: request.release,
            extra: extraRaw.map { SubscriptionExtra.make($0, sub) }, node: first))
    if let q = request.queue {
        q.retain()
        sub.pointee.extra!.pointee.queue = q
        sub.pointee.extra!.pointee.bus = type.pointee.bus
    }
    sub.pointee.extra?.pointee.backlog = backlog
    sub.pointee.extra?.pointee.owner = request.owner
    for i in 1..<nodeCount {
        let entry = NameTable<SubtypeEntry>.lookup(type.pointee.subtypes, request.subtypes[i])!
        Subscription.node(sub, i).initialize(to: ListNode(seq: seq, index: i, subtype: entry))
    }
    return sub
}

/// The kept events a REPLAY subscription to the pattern `pattern` replays: those of
/// every type it matches (narrowed by `subtypes`), oldest first across the types, each
/// retained for the caller; nil (nothing retained) when out of memory.  Under the lock.
private func keptForPattern(
    _ pattern: UnsafeMutablePointer<TypeEntry>,
    _ subtypes: Vector<CName>
) -> Vector<UnsafeMutablePointer<Payload>>? {
    var chosen = Vector<UnsafeMutablePointer<Payload>>()
    var keptAt = Vector<UInt64>()
    defer { keptAt.free() }
    var ok = true
    let name = pattern.pointee.name.cName
    NameTable<TypeEntry>.forEach(pattern.pointee.bus.pointee.types) { type in
        guard ok, subjectMatches(name, type.pointee.name.cName) else { return }
        ok = withUnsafeMutablePointer(to: &keptAt) {
            type.pointee.sticky.appendMatching(subtypes, to: &chosen, keptAt: $0)
        }
    }
    guard ok else {
        chosen.free()
        return nil
    }
    // Each type's are in order already; kept events are few: an insertion sort merges.
    if let events = chosen.base, let order = keptAt.base {
        for i in 1..<max(chosen.count, 1) {
            let (event, at) = (events[i], order[i])
            var j = i
            while j > 0 && order[j - 1] > at {
                events[j] = events[j - 1]
                order[j] = order[j - 1]
                j -= 1
            }
            events[j] = event
            order[j] = at
        }
    }
    chosen.forEach { $0.retain() }
    return chosen
}

/// Publishes a made subscription: its nodes into their lists, then the type's sequence,
/// then the counts (a type coming alive wakes its autoconnect sources).
private func link(
    _ sub: UnsafeMutablePointer<Subscription>, _ type: UnsafeMutablePointer<TypeEntry>,
    _ after: inout AfterUnlock
) {
    for i in 0..<Int(sub.pointee.nodeCount) {
        let node = Subscription.node(sub, i)
        SubList.insert(node.pointee.list, node)
        node.pointee.subtypeEntry?.pointee.liveCount += 1
    }
    if let extra = sub.pointee.extra, extra.pointee.owner != nil { linkOwned(type, extra) }
    let bus = type.pointee.bus
    if type.pointee.patterns.isPattern { bus.field(&bus.pointee.patternSeq).pointee = sub.pointee.node.seq }
    // After the links: a dispatch that reads this sequence sees the nodes.
    qtshim_tsan_release(type)
    qtshim_atomic_store_u64(
        type.field(&type.pointee.seq), sub.pointee.node.seq | (type.pointee.owned != nil ? TypeEntry.hasOwned : 0))
    type.pointee.liveCount += 1
    if type.pointee.liveCount == 1 && !type.pointee.sources.isEmpty {
        typeLivenessChanged(type, live: true, &after)
    }
    if type.pointee.isNoSubscriberType {
        _ = qtshim_atomic_fetch_add_u64(bus.field(&bus.pointee.noSubscriberListeners), 1)
    }
}

func tokenIsActive(_ id: UInt64) -> Bool {
    withRegistry { state, _ in
        guard let sub = state.pool.lookup(id) else { return false }
        return SubState.isLive(sub)
    }
}

// MARK: - Counting

/// A subscription whose owner is gone (Owners.swift) is disposed here, not counted.
/// Pattern subscriptions count when an event of `type` reaches them.
func subscriberCount(_ bus: UnsafeMutablePointer<Bus>, _ type: CName, _ subtype: CName?) -> Int32 {
    withRegistry { state, after in
        if isClosed(bus) { return failClosed() }
        var total = 0
        if let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, type) {
            if entry.pointee.owned != nil { disposeOwnerless(&state, entry, &after) }
            total += reached(entry, subtype)
        }
        SubjectTrie.forEachMatch(bus.pointee.patternTrie, type) { raw in
            let pattern = raw.assumingMemoryBound(to: TypeEntry.self)
            if pattern.pointee.owned != nil { disposeOwnerless(&state, pattern, &after) }
            total += reached(pattern, subtype)
        }
        return Int32(clamping: total)
    }
}

/// The live subscriptions of `entry` an event with `subtype` reaches.  Under the lock.
private func reached(_ entry: UnsafeMutablePointer<TypeEntry>, _ subtype: CName?) -> Int {
    guard let subtype else { return entry.pointee.liveCount }
    let specific = NameTable<SubtypeEntry>.lookup(entry.pointee.subtypes, subtype)?.pointee.liveCount ?? 0
    var whole = 0
    forEachNode(entry.pointee.whole) { _ in whole += 1 }
    return specific + whole
}
