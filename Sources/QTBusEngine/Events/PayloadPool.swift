// SPDX-License-Identifier: MIT
// A bounded queue's event copies in blocks allocated with the queue: the first queued
// delivery of a dispatch to a bounded queue copies the event into one of them instead
// of a malloc'd Payload, so a flood through a bounded queue allocates nothing (the
// bytes and names must fit a block).
//
// Why not malloc: a flood must leave the heap as it found it, and the copy is made on
// the dispatching thread and freed on the queue's, so glibc's per-thread caches never
// serve it (docs/perf-notes.md, "Event copies of a bounded queue").
//
// The free blocks are a stack threaded through their first words, its head one atomic
// word: the index of the first free block, how many blocks are out, whether the queue
// is gone, and a tag that changes with every push and pop, so a pop that read a stale
// `next` fails its CAS (no ABA).  Any thread may give a block back (the last reference
// to a copy may be dropped anywhere), and the pool outlives its queue until the last
// block is back: whoever makes the head say "gone, none out" frees it.
import CQtbusShims
import CQtbusLibc

struct PayloadPool {
    /// First: ThreadSanitizer reports Swift's accesses through `pointee` at the base
    /// address, where no atomic must be (see `field(_:)` in Lock.swift).
    let blocks: UnsafeMutableRawPointer
    let count: Int
    /// Atomic.  Bits 0-15: index + 1 of the first free block (0: none); 16-31: blocks
    /// out; 32: the queue is gone; 33-63: the tag.
    var head: UInt64 = 0

    static let blockSize = 256
    /// A block: the pool's address, the next free block's index + 1 (atomic), then the
    /// Payload, 16-aligned.
    static let payloadOffset = 16
    /// The most a payload (header, bytes and names, see Payload.swift) may take.
    static let payloadRoom = blockSize - payloadOffset
    static let maxBlocks = 0xFFFF

    fileprivate static let indexMask: UInt64 = 0xFFFF
    fileprivate static let outUnit: UInt64 = 1 << 16
    fileprivate static let outMask: UInt64 = 0xFFFF << 16
    fileprivate static let goneBit: UInt64 = 1 << 32
    fileprivate static let tagUnit: UInt64 = 1 << 33
}

/// A pool of `count` blocks (at most `maxBlocks`), all free; nil when out of memory.
func makePayloadPool(count: Int) -> UnsafeMutablePointer<PayloadPool>? {
    let count = min(count, PayloadPool.maxBlocks)
    guard let pool = tryAllocate(PayloadPool.self),
        let blocks = aligned_alloc(64, count * PayloadPool.blockSize)
    else {
        return nil
    }
    pool.initialize(to: PayloadPool(blocks: blocks, count: count))
    for i in 0..<count {
        let block = blocks + i * PayloadPool.blockSize
        block.storeBytes(of: UnsafeRawPointer(pool), as: UnsafeRawPointer.self)
        // Each free block names the next; the last none.
        block.storeBytes(of: UInt32(i + 1 < count ? i + 2 : 0), toByteOffset: 8, as: UInt32.self)
    }
    qtshim_atomic_store_u64(pool.field(&pool.pointee.head), count > 0 ? 1 : 0)
    return pool
}

extension UnsafeMutablePointer where Pointee == PayloadPool {
    /// A free block's payload memory (`payloadRoom` bytes), or nil when none is free.
    @inline(__always)
    func take() -> UnsafeMutableRawPointer? {
        let head = field(&pointee.head)
        var old = qtshim_atomic_load_u64(head)
        while true {
            let first = old & PayloadPool.indexMask
            guard first != 0 else { return nil }
            let block = pointee.blocks + Int(first - 1) * PayloadPool.blockSize
            let next = UInt64(qtshim_atomic_load_u32(nextWord(block)))
            let new = (old & ~PayloadPool.indexMask | next) &+ PayloadPool.outUnit &+ PayloadPool.tagUnit
            if qtshim_atomic_cas_u64(head, old, new) {
                qtshim_tsan_acquire(block)
                return block + PayloadPool.payloadOffset
            }
            old = qtshim_atomic_load_u64(head)
        }
    }

    /// The queue is gone: the pool goes with the last block given back.
    func orphan() {
        let head = field(&pointee.head)
        var old = qtshim_atomic_load_u64(head)
        while !qtshim_atomic_cas_u64(head, old, old | PayloadPool.goneBit) { old = qtshim_atomic_load_u64(head) }
        if old & PayloadPool.outMask == 0 { freePool(self) }
    }
}

/// Gives back the block holding `payload` (memory `take` returned), from any thread.
func returnPayloadBlock(_ payload: UnsafeMutableRawPointer) {
    let block = payload - PayloadPool.payloadOffset
    let pool = UnsafeMutablePointer<PayloadPool>(
        mutating: block.load(as: UnsafeRawPointer.self)
            .assumingMemoryBound(to: PayloadPool.self))
    let index = UInt64((block - pool.pointee.blocks) / PayloadPool.blockSize)
    let head = pool.field(&pool.pointee.head)
    qtshim_tsan_release(block)
    var old = qtshim_atomic_load_u64(head)
    var new: UInt64
    repeat {
        qtshim_atomic_store_u32(nextWord(block), UInt32(old & PayloadPool.indexMask))
        new = (old & ~PayloadPool.indexMask | (index + 1)) &- PayloadPool.outUnit &+ PayloadPool.tagUnit
        if qtshim_atomic_cas_u64(head, old, new) { break }
        old = qtshim_atomic_load_u64(head)
    } while true
    if new & PayloadPool.goneBit != 0 && new & PayloadPool.outMask == 0 { freePool(pool) }
}

@inline(__always)
private func nextWord(_ block: UnsafeMutableRawPointer) -> UnsafeMutablePointer<UInt32> {
    (block + 8).assumingMemoryBound(to: UInt32.self)
}

private func freePool(_ pool: UnsafeMutablePointer<PayloadPool>) {
    free(pool.pointee.blocks)
    pool.deinitialize(count: 1)
    free(pool)
}
