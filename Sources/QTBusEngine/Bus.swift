// Buses, the registry lock, tokens and bags: everything that changes the store.
//
// One registry lock guards every bus's lists and tables and the token and bag handle
// tables: a token or a bag is disposed without naming its bus, and one lock keeps
// "dispose vs. bus destroy vs. bag dispose" simple to reason about.  Dispatch never
// takes it (Bus+Dispatch.swift); subscribe and dispose hold it for a few list
// operations and no user code.
import CQtbusShims
import Glibc

struct Bus {
    /// Registry lock: type entries made by dispatches of types nobody subscribed to
    /// (`learnType`), at most `maxLearnedTypes`.  First: it is the only field written
    /// through `pointee`, which ThreadSanitizer reports at the struct's base address
    /// (see `UnsafeMutablePointer.field`), and only lock holders touch it.
    var learnedTypes = 0
    /// Atomic: 1 once qtbus_bus_destroy started; calls then return QTBUS_ECLOSED.
    var closed: UInt32 = 0
    /// Atomic: NameTable of TypeEntry.
    var types: UnsafeMutableRawPointer? = nil
    /// The bus's own pin plus one per qtbus_dispatch_on_* post in flight.
    var pins: UInt64 = 1
    /// Atomic: live subscriptions of QTNoSubscriberEvent, so an event nobody receives
    /// is not dispatched a second time for nobody.
    var noSubscriberListeners: UInt64 = 0
    /// Serial queue of qtbus_dispatch_on_bus_queue, so posts keep their order per bus.
    let queue: qtbus_dispatch_queue_t
    let isShared: Bool
    /// Registry lock: ids of the bus's commands and shared sources, disposed with it.
    var commands: [UInt64] = []
    var sources: [UInt64] = []
}

/// A dispose bag: the tokens put in it.  A subscription disposed on its own stays
/// listed (its token is stale, so the bag skips it); `live` counts the others, and the
/// list is compacted when most of it is stale, so a long-lived bag with churn stays
/// small without the three link words every subscription would otherwise carry.
struct Bag {
    var tokens: [UInt64] = []
    var live = 0
}

struct RegistryState {
    var pool = SubscriptionPool()
    var bags = HandleTable<UnsafeMutablePointer<Bag>>()
    var commands = HandleTable<UnsafeMutablePointer<Command>>()
    /// Execution id -> its command.
    var executions = HandleTable<UnsafeMutablePointer<Command>>()
    var sources = HandleTable<UnsafeMutablePointer<SharedSource>>()
    /// Sources whose worker role a critical section claimed (autoconnect); the entry
    /// point that holds the lock takes them (`takeSourcesToRun`) and runs them after
    /// unlocking, so start and stop run inside the call that caused them.
    var sourcesToRun: [UnsafeMutablePointer<SharedSource>] = []

    mutating func takeSourcesToRun() -> [UnsafeMutablePointer<SharedSource>] {
        if sourcesToRun.isEmpty { return [] }
        defer { sourcesToRun = [] }
        return sourcesToRun
    }
}

/// The registry lock and what it guards beyond the buses' own fields.
let registry = Locked(RegistryState())

/// Never freed; its fields are atomics or guarded by the registry lock.
nonisolated(unsafe) let sharedBus: UnsafeMutablePointer<Bus> = makeBus(shared: true)

func makeBus(shared: Bool) -> UnsafeMutablePointer<Bus> {
    let bus = UnsafeMutablePointer<Bus>.allocate(capacity: 1)
    bus.initialize(to: Bus(queue: qtbus_dq_create_serial(shared ? "qtbus.shared" : "qtbus.bus")!, isShared: shared))
    return bus
}

@inline(__always)
func isClosed(_ bus: UnsafeMutablePointer<Bus>) -> Bool {
    qtbus_atomic_load_u32(bus.field(\.closed)) != 0
}

// MARK: - Entries

/// The type entry for `name`, made if missing.  Under the registry lock.
func typeEntry(_ bus: UnsafeMutablePointer<Bus>, _ name: CName) -> UnsafeMutablePointer<TypeEntry> {
    if let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, name) { return entry }
    let entry = UnsafeMutablePointer<TypeEntry>.allocate(capacity: 1)
    entry.initialize(to: TypeEntry(name: StoredName(copying: name), bus: bus,
                                   isNoSubscriberType: noSubscriberName.matches(name)))
    NameTable<TypeEntry>.insert(bus.field(\.types), entry)
    return entry
}

/// How many types a bus learns from dispatches alone (see `learnType`).
let maxLearnedTypes = 1024

/// Records an empty entry for a valid type that was dispatched before anyone subscribed
/// to it, so its later dispatches find the entry (an empty list) instead of validating
/// the name's UTF-8 again on every miss.  Bounded per bus, so a program dispatching
/// endless distinct names costs at most `maxLearnedTypes` entries; past that, misses
/// validate each time.  nil when the bound is reached or the bus is closing.
func learnType(_ bus: UnsafeMutablePointer<Bus>, _ name: CName) -> UnsafeMutablePointer<TypeEntry>? {
    registry.withLock { _ in
        if isClosed(bus) { return nil }
        if let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, name) { return entry }
        guard bus.pointee.learnedTypes < maxLearnedTypes else { return nil }
        bus.pointee.learnedTypes += 1
        return typeEntry(bus, name)
    }
}

/// The subtype entry for `name`, made if missing.  Under the registry lock.
func subtypeEntry(_ type: UnsafeMutablePointer<TypeEntry>, _ name: CName) -> UnsafeMutablePointer<SubtypeEntry> {
    if let entry = NameTable<SubtypeEntry>.lookup(type.pointee.subtypes, name) { return entry }
    let entry = UnsafeMutablePointer<SubtypeEntry>.allocate(capacity: 1)
    entry.initialize(to: SubtypeEntry(name: StoredName(copying: name), type: type))
    NameTable<SubtypeEntry>.insert(type.field(\.subtypes), entry)
    return entry
}

private let freeSubtypeEntry: Finalizer = { raw in
    let entry = raw!.assumingMemoryBound(to: SubtypeEntry.self)
    entry.pointee.name.free()
    entry.deinitialize(count: 1)
    entry.deallocate()
}

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

/// Under the registry lock; the subscription is live and in no bag.
private func bagLink(_ bag: UnsafeMutablePointer<Bag>, slot: UInt32, _ sub: UnsafeMutablePointer<Subscription>) {
    sub.pointee.link = slot + 1
    bag.pointee.tokens.append(SubscriptionPool.token(sub))
    bag.pointee.live += 1
}

/// Under the registry lock, as the subscription is unlinked (its token already stale).
private func bagUnlink(_ state: inout RegistryState, _ sub: UnsafeMutablePointer<Subscription>) {
    guard sub.pointee.link != 0, let bag = state.bags.lookup(slot: sub.pointee.link - 1) else { return }
    sub.pointee.link = 0
    bag.pointee.live -= 1
    if bag.pointee.tokens.count >= 64 && bag.pointee.live * 4 < bag.pointee.tokens.count {
        let pool = state.pool
        bag.pointee.tokens.removeAll { pool.lookup($0) == nil }
    }
}

// MARK: - Dispose

/// Takes a disposed or fired subscription out of every list, its bag and the token
/// table.  Under the registry lock (an emptied subtype entry only needs its memory
/// freed, so `retireMemory` may take it here).
private func unlink(_ state: inout RegistryState, _ sub: UnsafeMutablePointer<Subscription>) {
    let type = Subscription.type(sub)
    SubscriptionPool.invalidate(sub)
    for i in 0..<Int(sub.pointee.nodeCount) {
        let node = Subscription.node(sub, i)
        SubList.remove(node.pointee.list, node)
        if let entry = node.pointee.subtypeEntry {
            entry.pointee.liveCount -= 1
            if entry.pointee.liveCount == 0 {
                NameTable<SubtypeEntry>.remove(type.pointee.subtypes, entry)
                reclaimer.retireMemory(UnsafeMutableRawPointer(entry), freeSubtypeEntry)
            }
        }
    }
    type.pointee.liveCount -= 1
    if type.pointee.liveCount == 0 && !type.pointee.sources.isEmpty {
        typeLivenessChanged(&state, type, live: false)
    }
    if type.pointee.isNoSubscriberType {
        _ = qtbus_atomic_fetch_sub_u64(type.pointee.bus.field(\.noSubscriberListeners), 1)
    }
    bagUnlink(&state, sub)
}

/// Hands unlinked subscriptions to the reclaimer.  Outside the lock: their finalizers
/// run release hooks.
private func retire(_ subs: [UnsafeMutablePointer<Subscription>]) {
    for sub in subs { retire(sub) }
}

private func retire(_ sub: UnsafeMutablePointer<Subscription>) {
    reclaimer.retire(UnsafeMutableRawPointer(sub), afterGracePeriod)
}

/// No dispatch can reach the subscription any more, and none can post a delivery of it:
/// release it now, unless deliveries of it are still queued.  Then the release is posted
/// to its queue, which is serial and FIFO, so it runs after the last of them.  (Posted
/// and done are counted on two cache lines, each written by one side, rather than with
/// one reference count bumped on one core and dropped on another for every delivery.)
private let afterGracePeriod: Finalizer = { raw in
    let sub = raw!.assumingMemoryBound(to: Subscription.self)
    guard let extra = sub.pointee.extra, let queue = extra.pointee.queue,
          qtbus_atomic_load_u64(extra.field(\.done)) != qtbus_atomic_load_u64(extra.field(\.posted)) else {
        return finalize(sub)
    }
    submit(queue, context: raw) { finalize($0!.assumingMemoryBound(to: Subscription.self)) }
}

/// Releases the userdata and gives the record back.
private func finalize(_ sub: UnsafeMutablePointer<Subscription>) {
    let release = sub.pointee.release
    let userdata = sub.pointee.userdata
    sub.pointee.release = nil  // cleared before the call: it can never run twice
    if let extra = sub.pointee.extra { SubscriptionExtra.free(extra) }
    registry.withLock { state in state.pool.give(sub) }
    release?(userdata)
}

/// qtbus_token_dispose.
func disposeToken(_ id: UInt64) -> Int32 {
    var sources: [UnsafeMutablePointer<SharedSource>] = []
    let sub: UnsafeMutablePointer<Subscription>? = registry.withLock { state in
        guard let sub = state.pool.lookup(id), SubState.claimForDispose(sub) else { return nil }
        unlink(&state, sub)
        sources = state.takeSourcesToRun()
        return sub
    }
    guard let sub else { return QTBUS_ESTALE.rawValue }
    retire(sub)
    runSources(sources)
    return QTBUS_OK.rawValue
}

/// After a ONCE subscription's delivery was claimed: unlink and retire it.
func finishOnce(_ sub: UnsafeMutablePointer<Subscription>) {
    let sources = registry.withLock { state in
        unlink(&state, sub)
        return state.takeSourcesToRun()
    }
    retire(sub)
    runSources(sources)
}

func tokenIsActive(_ id: UInt64) -> Bool {
    registry.withLock { state in
        guard let sub = state.pool.lookup(id) else { return false }
        return SubState.isLive(sub)
    }
}

// MARK: - Bags

func bagCreate() -> UInt64 {
    let bag = UnsafeMutablePointer<Bag>.allocate(capacity: 1)
    bag.initialize(to: Bag())
    return registry.withLock { $0.bags.insert(bag) }
}

func bagAdd(_ bagID: UInt64, _ tokenID: UInt64) -> Int32 {
    registry.withLock { state in
        guard let bag = state.bags.lookup(bagID), let sub = state.pool.lookup(tokenID),
              SubState.isLive(sub) else { return QTBUS_ESTALE.rawValue }
        let slot = UInt32(truncatingIfNeeded: bagID)
        if sub.pointee.link == slot + 1 { return QTBUS_OK.rawValue }
        if sub.pointee.link != 0 { return QTBUS_EINVAL.rawValue }
        bagLink(bag, slot: slot, sub)
        return QTBUS_OK.rawValue
    }
}

func bagDispose(_ bagID: UInt64) -> Int32 {
    var subs: [UnsafeMutablePointer<Subscription>] = []
    var sources: [UnsafeMutablePointer<SharedSource>] = []
    let found: UnsafeMutablePointer<Bag>? = registry.withLock { state in
        guard let bag = state.bags.remove(bagID) else { return nil }
        for token in bag.pointee.tokens {
            guard let sub = state.pool.lookup(token) else { continue }
            // Out of the bag first: a fired ONCE subscription is unlinked by its
            // dispatcher later, and must not find this bag's slot then.
            sub.pointee.link = 0
            if SubState.claimForDispose(sub) {
                unlink(&state, sub)
                subs.append(sub)
            }
        }
        sources = state.takeSourcesToRun()
        return bag
    }
    guard let bag = found else { return QTBUS_ESTALE.rawValue }
    bag.deinitialize(count: 1)
    bag.deallocate()
    retire(subs)
    runSources(sources)
    return QTBUS_OK.rawValue
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

// MARK: - Destroy

/// qtbus_bus_destroy: closes the bus, disposes every subscription, drops its sticky
/// events, and frees it once no dispatch or post can still reach it.
func destroyBus(_ bus: UnsafeMutablePointer<Bus>) -> Int32 {
    var subs: [UnsafeMutablePointer<Subscription>] = []
    var payloads: [UnsafeMutablePointer<Payload>] = []
    var commands: [UnsafeMutablePointer<Command>] = []
    var sources: [UnsafeMutablePointer<SharedSource>] = []
    let status: Int32 = registry.withLock { state in
        if bus.pointee.isShared { return QTBUS_EINVAL.rawValue }
        guard qtbus_atomic_cas_u32(bus.field(\.closed), 0, 1) else { return QTBUS_ECLOSED.rawValue }
        var found: [UnsafeMutablePointer<Subscription>] = []
        NameTable<TypeEntry>.forEach(bus.pointee.types) { type in
            forEachNode(type.pointee.whole) { found.append(Subscription.of($0)) }
            NameTable<SubtypeEntry>.forEach(type.pointee.subtypes) { entry in
                forEachNode(entry.pointee.list) { found.append(Subscription.of($0)) }
            }
            payloads.append(contentsOf: type.pointee.sticky.removeAll())
        }
        // A subscription with several subtypes was found once per list: the CAS
        // picks it once.  Fired ONCE subscriptions are unlinked by their dispatcher.
        for sub in found where SubState.claimForDispose(sub) {
            unlink(&state, sub)
            subs.append(sub)
        }
        // Its commands and sources go with it (a connected source is stopped).
        for id in bus.pointee.commands {
            if let c = state.commands.lookup(id), disposeCommandLocked(&state, c) { commands.append(c) }
        }
        for id in bus.pointee.sources {
            if let s = state.sources.lookup(id), disposeSourceLocked(&state, s) { state.sourcesToRun.append(s) }
        }
        sources = state.takeSourcesToRun()
        return QTBUS_OK.rawValue
    }
    guard status == QTBUS_OK.rawValue else { return status }
    retire(subs)
    retireCommands(commands)
    runSources(sources)
    for p in payloads { payloadRelease(p) }
    reclaimer.retire(UnsafeMutableRawPointer(bus), dropBusStorePin)
    return QTBUS_OK.rawValue
}

private func forEachNode(_ list: SubList, _ body: (UnsafeMutablePointer<ListNode>) -> Void) {
    var cursor = list.head
    while let raw = cursor {
        let node = raw.assumingMemoryBound(to: ListNode.self)
        body(node)
        cursor = node.pointee.next
    }
}

private let dropBusStorePin: Finalizer = { raw in
    unpinBus(raw!.assumingMemoryBound(to: Bus.self))
}

@inline(__always)
func pinBus(_ bus: UnsafeMutablePointer<Bus>) {
    _ = qtbus_atomic_fetch_add_u64(bus.field(\.pins), 1)
}

/// Drops a pin; the last one frees the bus with its tables and entries (every list is
/// empty by then: destroy unlinked all subscriptions under the lock).
func unpinBus(_ bus: UnsafeMutablePointer<Bus>) {
    guard qtbus_atomic_fetch_sub_u64(bus.field(\.pins), 1) == 1 else { return }
    NameTable<TypeEntry>.forEach(bus.pointee.types) { type in
        NameTable<SubtypeEntry>.forEach(type.pointee.subtypes) { entry in freeSubtypeEntry(UnsafeMutableRawPointer(entry)) }
        NameTable<SubtypeEntry>.free(type.pointee.subtypes)
        type.pointee.name.free()
        type.deinitialize(count: 1)
        type.deallocate()
    }
    NameTable<TypeEntry>.free(bus.pointee.types)
    qtbus_dq_release(bus.pointee.queue)
    bus.deinitialize(count: 1)
    bus.deallocate()
}
