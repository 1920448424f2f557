// SPDX-License-Identifier: MIT
// The kept events of a type (the store part of sticky events; StickyReplay.swift has the rest).
import CQtbusShims
import CQtbusLibc

/// One kept event: the newest of its subtype (or of the events without one).
struct KeptEvent: NamedEntry {
    /// nil for the events without a subtype, which no table holds.
    let subtype: StoredName?
    var name: StoredName { subtype! }
    /// nil while the record is empty (made by `record`, not yet filled).
    var payload: UnsafeMutablePointer<Payload>?
    /// The keep order, oldest first: a replay delivers in this order.
    var older: UnsafeMutablePointer<KeptEvent>? = nil
    var newer: UnsafeMutablePointer<KeptEvent>? = nil
    /// When it was kept, in the order of every type's (`keptSequence`): a pattern
    /// subscription's replay merges the kept events of several types by it.
    var keptAt: UInt64 = 0
}

/// Registry lock: the keep order across all types.
nonisolated(unsafe) private var keptSequence: UInt64 = 0

/// The kept events of one type: the newest per subtype, found by the subtype's bytes
/// (as every other name comparison in the engine) and listed in the order they were
/// kept.  Under the registry lock.
struct StickyStore {
    /// NameTable of KeptEvent: those with a subtype.
    private var bySubtype: UnsafeMutableRawPointer? = nil
    private var withoutSubtype: UnsafeMutablePointer<KeptEvent>? = nil
    private var oldest: UnsafeMutablePointer<KeptEvent>? = nil
    private var newest: UnsafeMutablePointer<KeptEvent>? = nil

    /// The record that keeps the events of `subtype`, made if missing (empty until
    /// `fill`: an empty record is invisible); nil when out of memory.
    mutating func record(_ subtype: CName?) -> UnsafeMutablePointer<KeptEvent>? {
        if let found = subtype.map({ NameTable<KeptEvent>.lookup(bySubtype, $0) }) ?? withoutSubtype { return found }
        guard let kept = tryAllocate(KeptEvent.self) else { return nil }
        var name: StoredName? = nil
        if let subtype {
            name = StoredName(copying: subtype)
            if name == nil {
                CQtbusLibc.free(kept)
                return nil
            }
        }
        kept.initialize(to: KeptEvent(subtype: name, payload: nil))
        if subtype == nil {
            withoutSubtype = kept
        } else if !withUnsafeMutablePointer(to: &bySubtype, { NameTable<KeptEvent>.insert($0, kept) }) {
            Self.freeRecord(kept)
            return nil
        }
        return kept
    }

    /// Keeps `payload` (taking its reference) as the newest event of `kept`'s subtype;
    /// returns the payload it replaces, for the caller to release after the unlock.
    mutating func fill(
        _ kept: UnsafeMutablePointer<KeptEvent>,
        _ payload: UnsafeMutablePointer<Payload>
    ) -> UnsafeMutablePointer<Payload>? {
        let replaced = kept.pointee.payload
        if replaced != nil { unlist(kept) }
        kept.pointee.payload = payload
        keptSequence += 1
        kept.pointee.keptAt = keptSequence
        list(kept)
        return replaced
    }

    /// The kept events a subscription to `subtypes` (empty: the whole type) replays,
    /// oldest first, each retained for the caller; nil (nothing retained) when out of
    /// memory.
    func matching(_ subtypes: Vector<CName>) -> Vector<UnsafeMutablePointer<Payload>>? {
        var chosen = Vector<UnsafeMutablePointer<Payload>>()
        guard appendMatching(subtypes, to: &chosen, keptAt: nil) else {
            chosen.free()
            return nil
        }
        chosen.forEach { $0.retain() }
        return chosen
    }

    /// Appends the kept events `matching` would choose, oldest first, not retained, and
    /// when each was kept to `order` (if given); false when out of memory.
    func appendMatching(
        _ subtypes: Vector<CName>, to chosen: inout Vector<UnsafeMutablePointer<Payload>>,
        keptAt order: UnsafeMutablePointer<Vector<UInt64>>?
    ) -> Bool {
        var cursor = oldest
        while let kept = cursor {
            cursor = kept.pointee.newer
            if !subtypes.isEmpty {
                guard kept != withoutSubtype else { continue }
                var wanted = false
                subtypes.forEach { if kept.pointee.subtype!.isSame(as: $0) { wanted = true } }
                guard wanted else { continue }
            }
            guard chosen.tryAppend(kept.pointee.payload!) else { return false }
            if let order, !order.pointee.tryAppend(kept.pointee.keptAt) { return false }
        }
        return true
    }

    /// Drops the kept event of `subtype` (nil with `all`: every one) and hands its
    /// payload to `after` to release; returns how many were dropped.
    mutating func clear(_ subtype: CName?, all: Bool, _ after: inout AfterUnlock) -> Int {
        if all { return removeAll(&after) }
        guard let kept = subtype.map({ NameTable<KeptEvent>.lookup(bySubtype, $0) }) ?? withoutSubtype,
            kept.pointee.payload != nil
        else { return 0 }
        drop(kept, &after)
        return 1
    }

    mutating func removeAll(_ after: inout AfterUnlock) -> Int {
        var dropped = 0
        while let kept = oldest {
            drop(kept, &after)
            dropped += 1
        }
        return dropped
    }

    /// Frees the store's memory (its events were removed; empty records may remain).
    mutating func free() {
        precondition(oldest == nil)
        NameTable<KeptEvent>.forEach(bySubtype, Self.freeRecord)
        NameTable<KeptEvent>.free(bySubtype)
        bySubtype = nil
        if let kept = withoutSubtype { Self.freeRecord(kept) }
        withoutSubtype = nil
    }

    private mutating func drop(_ kept: UnsafeMutablePointer<KeptEvent>, _ after: inout AfterUnlock) {
        unlist(kept)
        if kept == withoutSubtype {
            withoutSubtype = nil
        } else {
            NameTable<KeptEvent>.remove(bySubtype, kept)
        }
        after.release(kept.pointee.payload!)
        // Only writers, under the lock, read this table: no grace period is needed.
        Self.freeRecord(kept)
    }

    private static func freeRecord(_ kept: UnsafeMutablePointer<KeptEvent>) {
        kept.pointee.subtype?.free()
        kept.deinitialize(count: 1)
        CQtbusLibc.free(kept)
    }

    private mutating func list(_ kept: UnsafeMutablePointer<KeptEvent>) {
        kept.pointee.older = newest
        kept.pointee.newer = nil
        if let n = newest { n.pointee.newer = kept } else { oldest = kept }
        newest = kept
    }

    private mutating func unlist(_ kept: UnsafeMutablePointer<KeptEvent>) {
        if let o = kept.pointee.older { o.pointee.newer = kept.pointee.newer } else { oldest = kept.pointee.newer }
        if let n = kept.pointee.newer { n.pointee.older = kept.pointee.older } else { newest = kept.pointee.older }
    }
}
