// The kept events of a type (the store part of sticky events; Sticky.swift has the rest).
import CQtbusShims
import Glibc

/// The kept events of one type: the newest per subtype (nil: events without one).
/// Keyed by the subtype's bytes, as every other name comparison in the engine: a Swift
/// String would make canonically equivalent spellings one key.  Under the registry lock.
struct StickyStore {
    typealias Key = [UInt8]

    private struct Kept {
        let order: UInt64
        let payload: UnsafeMutablePointer<Payload>
    }

    private var kept: [Key?: Kept] = [:]
    private var counter: UInt64 = 0

    /// Keeps `payload` (taking its reference); returns the one it replaces.
    mutating func keep(_ subtype: Key?, _ payload: UnsafeMutablePointer<Payload>) -> UnsafeMutablePointer<Payload>? {
        counter += 1
        return kept.updateValue(Kept(order: counter, payload: payload), forKey: subtype)?.payload
    }

    /// The kept events a subscription to `subtypes` (empty: the whole type) replays,
    /// oldest first, each retained for the caller.
    func matching(_ subtypes: [Key]) -> [UnsafeMutablePointer<Payload>] {
        let chosen = kept.filter { key, _ in subtypes.isEmpty || key.map(subtypes.contains) ?? false }
        return chosen.values.sorted { $0.order < $1.order }.map {
            $0.payload.retain()
            return $0.payload
        }
    }

    /// Drops the kept events of `subtype` (nil with `all`: every one); the caller
    /// releases the returned payloads outside the lock.
    mutating func clear(_ subtype: Key?, all: Bool) -> [UnsafeMutablePointer<Payload>] {
        if all { return removeAll() }
        return kept.removeValue(forKey: subtype).map { [$0.payload] } ?? []
    }

    mutating func removeAll() -> [UnsafeMutablePointer<Payload>] {
        let payloads = kept.values.map(\.payload)
        kept.removeAll()
        return payloads
    }
}
