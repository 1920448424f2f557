// SPDX-License-Identifier: MIT
// The store: QTEventBus's dictionary of doubly linked lists plus an index.
//
//   Bus.types      name table: type name  -> TypeEntry
//   TypeEntry      .whole: list of the whole-type subscriptions (and .delivery, the
//                  same as an array that a dispatch makes and walks: DeliveryArray.swift)
//                  .subtypes: name table: subtype name -> SubtypeEntry (.list)
//   pool           token id -> Subscription (SubscriptionPool.swift), so dispose is O(1)
//
// Every list is kept in delivery order -- priority descending, then subscription order
// -- so subscribe is O(1) at equal priority (append at the tail) and dispose is O(1)
// (unlink through prev).  Writers change lists and tables only under the registry
// lock.  Readers (the dispatch path) take no lock: they follow `next` pointers and
// table slots published with release stores, as in the Linux kernel's RCU lists.  An
// unlinked node keeps its `next`, so a reader standing on it walks on; its memory is
// freed only after the dispatches that could see it have returned (Reclamation.swift).
//
// One registry lock guards every bus's lists and tables and the token and bag handle
// tables: a token or a bag is disposed without naming its bus, and one lock keeps
// "dispose vs. bus destroy vs. bag dispose" simple to reason about.  Dispatch never
// takes it (Dispatch.swift); subscribe and dispose hold it for a few list
// operations and no user code.
import CQtbusShims
import CQtbusLibc

struct RegistryState {
    var pool = SubscriptionPool()
    var bags = HandleTable<UnsafeMutablePointer<Bag>>()
    var commands = HandleTable<UnsafeMutablePointer<Command>>()
    /// Execution id -> its command.
    var executions = HandleTable<UnsafeMutablePointer<Command>>()
    var sources = HandleTable<UnsafeMutablePointer<SharedSource>>()
    /// Deferred replies (qtbus_event_defer) by id.
    var deferred = HandleTable<UnsafeMutablePointer<DeferredReply>>()
    /// The buses whose trace hook takes MISUSE records (Trace.swift).
    var misuseHooks = Vector<MisuseHook>()
}

/// What the registry lock guards beyond the buses' own fields: touched only through
/// `withRegistry`, under the lock.  The state and the lock's word (qtbus_shims.h) are in
/// static storage, not allocated by the first call that takes the lock, where a failed
/// allocation could not be reported (a Swift class instance, whose allocation the
/// runtime does not survive failing, held them before).  `RegistryState()` allocates
/// nothing; its tables grow where failing is reported.
nonisolated(unsafe) private var registry = RegistryState()

@inline(__always)
private var registryLock: RawLock { RawLock(static: qtshim_registry_lock()) }

/// What a critical section of the registry leaves for after the unlock: everything that
/// runs user code (trace hooks; release hooks, through the reclaimer; source start and
/// stop; replays; object releases) or takes the lock again.  `withRegistry` runs it as
/// soon as the lock is dropped, on the calling thread, in this order: trace records,
/// retirements, then calls in the order they were added, then payload releases.
struct AfterUnlock {
    // Trivial storage only (pointers, C function pointers, counts): every subscribe and
    // dispose makes one, and an AfterUnlock holding Swift arrays costs retains, releases
    // and value-witness calls that bench-c's "subscribe+dispose" row shows.  The first
    // item of each kind is inline (a dispose retires one subscription); further ones go
    // to a buffer malloc'd on first use and freed by `run`.
    private enum Kind: UInt8 { case retire, call, release }
    private struct Item {
        let kind: Kind
        let object: UnsafeMutableRawPointer
        let function: Finalizer?
    }

    private var retired: Item? = nil
    private var called: Item? = nil
    private var released: Item? = nil
    private var more: UnsafeMutablePointer<Item>? = nil
    private var moreCount = 0
    private var moreCapacity = 0
    /// Trace records made under the lock (Trace.swift), the last one first.
    private var notes: UnsafeMutablePointer<TraceNote>? = nil

    /// Hands an unlinked object to the reclaimer: `finalize(object)` runs once no
    /// dispatch can still see it (Reclamation.swift).
    mutating func retire(_ object: UnsafeMutableRawPointer, _ finalize: Finalizer) {
        let item = Item(kind: .retire, object: object, function: finalize)
        if retired == nil { retired = item } else { append(item) }
    }

    /// Calls `run(context)`.  How the layers above hand work to this one: a source's
    /// reconcile, a replay, a command's publications.
    mutating func call(_ run: Finalizer, _ context: UnsafeMutableRawPointer) {
        let item = Item(kind: .call, object: context, function: run)
        if called == nil { called = item } else { append(item) }
    }

    /// Drops one reference to `payload`.
    mutating func release(_ payload: UnsafeMutablePointer<Payload>) {
        let item = Item(kind: .release, object: UnsafeMutableRawPointer(payload), function: nil)
        if released == nil { released = item } else { append(item) }
    }

    /// Emits a trace record (first of all: a DISPOSE comes before its RELEASE).
    mutating func note(_ note: UnsafeMutablePointer<TraceNote>) {
        note.pointee.next = notes
        notes = note
    }

    /// Drops one reference to each payload.
    mutating func release(_ payloads: [UnsafeMutablePointer<Payload>]) {
        for p in payloads { release(p) }
    }

    private mutating func append(_ item: Item) {
        if moreCount == moreCapacity {
            // What is recorded here must run (a release, a retirement): wait for memory.
            let capacity = max(8, moreCapacity * 2)
            let bytes = capacity * MemoryLayout<Item>.stride
            let grown = realloc(more, bytes) ?? waitForMemory { realloc(more, bytes) }
            more = grown.bindMemory(to: Item.self, capacity: capacity)
            moreCapacity = capacity
        }
        (more! + moreCount).initialize(to: item)
        moreCount += 1
    }

    /// Trace records, retirements, then calls, then releases; each kind in the order
    /// it was added.
    @inline(__always)
    fileprivate mutating func run() {
        if let notes { emitNotes(notes) }
        if let retired { reclaimer.retire(retired.object, retired.function!) }
        if more == nil {
            // The common case: at most one item of each kind.
            if let called { called.function!(called.object) }
            if let released { released.object.assumingMemoryBound(to: Payload.self).release() }
            return
        }
        runMore()
    }

    @inline(never)
    private mutating func runMore() {
        let more = self.more!
        for i in 0..<moreCount where more[i].kind == .retire { Self.run(more[i]) }
        if let called { Self.run(called) }
        for i in 0..<moreCount where more[i].kind == .call { Self.run(more[i]) }
        if let released { Self.run(released) }
        for i in 0..<moreCount where more[i].kind == .release { Self.run(more[i]) }
        free(more)
        self.more = nil
        moreCount = 0
    }

    private static func run(_ item: Item) {
        switch item.kind {
        case .retire: reclaimer.retire(item.object, item.function!)
        case .call: item.function!(item.object)
        case .release: item.object.assumingMemoryBound(to: Payload.self).release()
        }
    }
}

/// Runs `body` under the registry lock, then what it left in `after`, unlocked.  The
/// one way into the registry, so no change can leave user code to run under the lock
/// or forget to run it.
func withRegistry<R>(_ body: (inout RegistryState, inout AfterUnlock) -> R) -> R {
    var after = AfterUnlock()
    let result = registryLock.withLock { body(&registry, &after) }
    after.run()
    return result
}

/// The same for a critical section that leaves nothing for after the unlock (it is
/// given nothing to leave it in): a release's return of its record, once per dispose.
func withRegistry<R>(_ body: (inout RegistryState) -> R) -> R {
    registryLock.withLock { body(&registry) }
}

// MARK: - Entries

/// The type entry for `name`, made if missing; nil when out of memory.  Under the
/// registry lock.  A new entry is empty, so leaving it when the caller then fails
/// changes nothing a caller can see (it is freed with the bus).
func typeEntry(_ bus: UnsafeMutablePointer<Bus>, _ name: CName) -> UnsafeMutablePointer<TypeEntry>? {
    if let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, name) { return entry }
    return insertEntry(bus, name, into: bus.field(&bus.pointee.types), isPattern: false)
}

/// A new, empty entry named `name` in the table at `table` (the bus's types or its
/// patterns); nil when out of memory, with nothing changed.
private func insertEntry(
    _ bus: UnsafeMutablePointer<Bus>, _ name: CName,
    into table: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
    isPattern: Bool
) -> UnsafeMutablePointer<TypeEntry>? {
    guard let entry = tryAllocate(TypeEntry.self) else { return nil }
    guard let stored = StoredName(copying: name) else {
        free(entry)
        return nil
    }
    entry.initialize(
        to: TypeEntry(
            name: stored, bus: bus,
            isNoSubscriberType: !isPattern && noSubscriberName.isSame(as: name)))
    entry.pointee.patterns.isPattern = isPattern
    guard NameTable<TypeEntry>.insert(table, entry) else {
        freeTypeEntry(entry)
        return nil
    }
    return entry
}

/// The entry of the pattern `name` (valid: Subjects.swift), made if missing and added to
/// the bus's SubjectTrie; nil when out of memory.  Under the registry lock.
func patternEntry(_ bus: UnsafeMutablePointer<Bus>, _ name: CName) -> UnsafeMutablePointer<TypeEntry>? {
    if let entry = NameTable<TypeEntry>.lookup(bus.pointee.patterns, name) { return entry }
    // The trie's place first: failing there leaves no entry, only empty nodes.
    guard let slot = SubjectTrie.slot(bus.field(&bus.pointee.patternTrie), for: name),
        let entry = insertEntry(bus, name, into: bus.field(&bus.pointee.patterns), isPattern: true)
    else { return nil }
    entry.pointee.patterns.index = UInt32(truncatingIfNeeded: bus.pointee.patternCount)
    qtshim_atomic_store_ptr(slot, UnsafeMutableRawPointer(entry))
    // After the trie: a dispatch that reads the new count finds the entry there, so a
    // type's answer kept with that count holds it (PatternDispatch.swift).
    qtshim_atomic_store_u64(bus.field(&bus.pointee.patternCount), bus.pointee.patternCount + 1)
    // After the count: a dispatch that sees the bit finds a trie.
    let flags = qtshim_atomic_load_u32(bus.field(&bus.pointee.flags))
    if flags & Bus.patternsBit == 0 { qtshim_atomic_store_u32(bus.field(&bus.pointee.flags), flags | Bus.patternsBit) }
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
    withRegistry { _, _ in
        if isClosed(bus) { return nil }
        if let entry = NameTable<TypeEntry>.lookup(bus.pointee.types, name) { return entry }
        guard bus.pointee.learnedTypes < maxLearnedTypes else { return nil }
        bus.pointee.learnedTypes += 1
        return typeEntry(bus, name)
    }
}

/// The subtype entry for `name`, made if missing; nil when out of memory.  Under the
/// registry lock.  A new entry is empty and unlisted until a subscription links into
/// it; one left by a failed subscribe is freed with its type.
func subtypeEntry(_ type: UnsafeMutablePointer<TypeEntry>, _ name: CName) -> UnsafeMutablePointer<SubtypeEntry>? {
    if let entry = NameTable<SubtypeEntry>.lookup(type.pointee.subtypes, name) { return entry }
    guard let entry = tryAllocate(SubtypeEntry.self) else { return nil }
    guard let stored = StoredName(copying: name) else {
        free(entry)
        return nil
    }
    entry.initialize(to: SubtypeEntry(name: stored, type: type))
    guard NameTable<SubtypeEntry>.insert(type.field(&type.pointee.subtypes), entry) else {
        freeSubtypeEntry(UnsafeMutableRawPointer(entry))
        return nil
    }
    return entry
}
