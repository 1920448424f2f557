// SPDX-License-Identifier: MIT
// What the store keeps per event type of a bus, and per subtype of a type.
import CQtbusShims
import CQtbusLibc

/// An event type on one bus, or a pattern (`patterns.isPattern`).  Freed with its bus.
///
/// Its fields, by who uses them: the entry itself and its subscriptions (the dispatch
/// reads these), then one group per feature that keeps state on a type: the pattern
/// state, the delivery array (a cache of the dispatch), and what shared sources,
/// typed signals and type ids keep.
struct TypeEntry: NamedEntry {
    /// Under the registry lock (first: see `field(_:)`).
    var liveCount = 0
    let name: StoredName
    let bus: UnsafeMutablePointer<Bus>
    /// This is QTNoSubscriberEvent: its live subscriptions are counted on the bus.
    let isNoSubscriberType: Bool
    /// Registry lock: this type's index in its bus's ResolvedTypes, or -1 (TypeIds.swift).
    /// Here, in padding the struct has anyway.
    var resolvedIndex: Int32 = -1
    /// Atomic: the sequence number of the newest subscription; stored after its nodes
    /// are linked, so a dispatch that reads it sees every node up to it.  Bit 47
    /// (`hasOwned`) says whether `owned` is non-empty: a dispatch loads `seq` anyway,
    /// so testing it there costs nothing, where a load of `owned` showed (docs/perf-notes.md,
    /// "The owned-subscriptions bit rides in `seq`").  Sequences stay below 2^47.
    var seq: UInt64 = 0
    var whole = SubList()
    /// Atomic: the SubscriptionExtra of the newest owned subscription (Owners.swift).
    var owned: UnsafeMutableRawPointer? = nil
    /// Atomic: NameTable of SubtypeEntry, nil until the first subtype subscription.
    var subtypes: UnsafeMutableRawPointer? = nil
    var sticky = StickyStore()

    // Per feature.
    var patterns = PatternState()
    var delivery = DeliveryCache()
    /// Registry lock: the autoconnect shared sources of this type (SharedSources.swift).
    var sources = Vector<UnsafeMutablePointer<SharedSource>>()
    /// Atomic: the typed signal signature (signals.c), set once under the registry lock;
    /// the entry holds one reference.
    var signature: UnsafeMutableRawPointer? = nil

    static let hasOwned: UInt64 = 1 << 47

    /// Patterns (PatternDispatch.swift): what a pattern's entry, or a literal type's, keeps.
    struct PatternState {
        /// Atomic: a literal type's PatternMatches, the pattern entries its events reach,
        /// computed by the dispatch that first needed them (nil: not yet).
        var matches: UnsafeMutableRawPointer? = nil
        /// A pattern entry's place among its bus's, in the order they were made (set
        /// before it is published).
        var index: UInt32 = 0
        /// The entry of a pattern (its name is the pattern: Bus.patterns), not of a type.
        var isPattern = false
    }

    /// The delivery array of the whole list (DeliveryArray.swift), a cache of the dispatch.
    struct DeliveryCache {
        /// Atomic: the DeliveryArray, made by the dispatch that first needed it (nil:
        /// not yet), current while `whole.changes` is its `changes`.
        var array: UnsafeMutableRawPointer? = nil
        /// Atomic: the `whole.changes` at which a dispatch last found no current array.
        /// The array is made by the second such dispatch at one count, so that a list
        /// changed between every two dispatches is walked, not copied each time.
        var askedAt: UInt64 = 0
    }
}

/// The pattern entries a type's events reach (`TypeEntry.patterns.matches`), found when the bus
/// had `patternCount` of them: current while it has that many.  Immutable once
/// published.
struct PatternMatches {
    let patternCount: UInt64
    let count: Int
}

extension UnsafeMutablePointer where Pointee == PatternMatches {
    var entries: UnsafeMutablePointer<UnsafeMutablePointer<TypeEntry>> {
        (UnsafeMutableRawPointer(self) + MemoryLayout<PatternMatches>.stride)
            .assumingMemoryBound(to: UnsafeMutablePointer<TypeEntry>.self)
    }
}

/// A subtype of a type.  Freed (after a grace period) when its last subscription goes.
struct SubtypeEntry: NamedEntry {
    /// Under the registry lock (first: see `field(_:)`).
    var liveCount = 0
    let name: StoredName
    let type: UnsafeMutablePointer<TypeEntry>
    var list = SubList()
}

let freeSubtypeEntry: Finalizer = { raw in
    let entry = raw!.assumingMemoryBound(to: SubtypeEntry.self)
    entry.pointee.name.free()
    entry.deinitialize(count: 1)
    free(entry)
}

/// Frees a type entry with its subtype entries and tables.  Only when no reader can
/// hold it (the bus is being freed), or when it was never published.
func freeTypeEntry(_ type: UnsafeMutablePointer<TypeEntry>) {
    NameTable<SubtypeEntry>.forEach(type.pointee.subtypes) { entry in freeSubtypeEntry(UnsafeMutableRawPointer(entry)) }
    NameTable<SubtypeEntry>.free(type.pointee.subtypes)
    type.pointee.sticky.free()
    type.pointee.sources.free()
    free(type.pointee.patterns.matches)
    free(type.pointee.delivery.array)
    if let signature = type.pointee.signature { qtshim_signature_release(signature) }
    type.pointee.name.free()
    type.deinitialize(count: 1)
    free(type)
}
