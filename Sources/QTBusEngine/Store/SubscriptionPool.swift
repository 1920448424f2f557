// SPDX-License-Identifier: MIT
// The pool of subscription records, and tokens: a token id is a record's index and
// generation, checked on every lookup.
import CQtbusShims
import CQtbusLibc

/// A bit no token id has (the top bit of its pool index: the pool stops short of it), so
/// that a Swift token keeps its id and its disposed flag in one atomic word.
@inlinable package var _qtEngineTokenSpareBit: UInt64 { 1 << 31 }

/// The pool of subscription records: chunks that never move, so a record's address
/// is stable for the registry's life; free records form a list through `bagOrFreeLink`.
/// Registry lock only.
struct SubscriptionPool {
    // 512 records of 80 bytes are exactly ten pages (see `take`).
    private static let chunkShift = 9
    private static let chunkSize = 1 << chunkShift
    private var chunks: UnsafeMutablePointer<UnsafeMutablePointer<Subscription>>? = nil
    private var chunkCapacity = 0
    private var count = 0
    private var freeHead: UInt32 = 0

    @inline(__always)
    private func record(_ index: Int) -> UnsafeMutablePointer<Subscription> {
        chunks![index >> Self.chunkShift] + (index & (Self.chunkSize - 1))
    }

    /// A record to initialise (with the returned index and generation); nil when out of
    /// memory.
    mutating func take() -> (UnsafeMutablePointer<Subscription>, index: UInt32, generation: UInt32)? {
        if freeHead != 0 {
            let index = Int(freeHead - 1)
            let r = record(index)
            freeHead = r.pointee.bagOrFreeLink
            return (r, UInt32(index), r.pointee.generation)
        }
        // Index bit 31 stays clear in every token (`_qtEngineTokenSpareBit`); 2^31
        // records would take 160 GiB, so this refuses nothing a program can reach.
        if count == Int(_qtEngineTokenSpareBit) { return nil }
        if count == chunkCapacity * Self.chunkSize {
            guard let grown = tryAllocate(UnsafeMutablePointer<Subscription>.self, capacity: max(8, chunkCapacity * 2))
            else {
                return nil
            }
            if let old = chunks {
                grown.moveInitialize(from: old, count: chunkCapacity)
                free(old)
            }
            chunks = grown
            chunkCapacity = max(8, chunkCapacity * 2)
        }
        if count & (Self.chunkSize - 1) == 0 {
            // Straight from mmap, whole pages: the memory a subscription costs is its
            // record, with no allocator header.
            let size = Self.chunkSize * MemoryLayout<Subscription>.stride
            guard let raw = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
                raw != UnsafeMutableRawPointer(bitPattern: -1)
            else { return nil }
            qtshim_lsan_register_root_region(raw, size)
            chunks![count >> Self.chunkShift] = raw.bindMemory(to: Subscription.self, capacity: Self.chunkSize)
        }
        count += 1
        return (record(count - 1), UInt32(count - 1), 1)
    }

    /// Gives a released record back; its generation moves on, so its token is stale
    /// for good (until then lookups find it, not live).
    mutating func give(_ sub: UnsafeMutablePointer<Subscription>) {
        let next = sub.pointee.generation &+ 1
        sub.pointee.generation = next == 0 ? 1 : next
        sub.pointee.bagOrFreeLink = freeHead
        freeHead = sub.pointee.index + 1
    }

    /// The subscription of a token id until its record is given back (live, or
    /// unlinked and waiting for its release: callers check the state); nil for 0,
    /// forged or stale ids.
    func lookup(_ id: UInt64) -> UnsafeMutablePointer<Subscription>? {
        let index = Int(id & 0xFFFF_FFFF)
        let generation = UInt32(truncatingIfNeeded: id >> 32)
        guard index < count, generation != 0 else { return nil }
        let r = record(index)
        return r.pointee.generation == generation ? r : nil
    }

    /// The subscription's token: fixed from subscribe to release, so a dispatch may
    /// read it (for a probe or a trace record) while the subscription is disposed.
    static func token(_ sub: UnsafeMutablePointer<Subscription>) -> UInt64 {
        UInt64(sub.pointee.generation) << 32 | UInt64(sub.pointee.index)
    }
}
