// SPDX-License-Identifier: MIT
// Bytes handed to the engine as an event's data: followed by a NUL that is not counted,
// so that C handlers can read text in place, and copied on the stack, not the heap.

/// Calls `body` with a 16-aligned copy of `bytes` followed by a NUL, and its count
/// (without the NUL).
@inlinable @inline(__always)
func _withNULTerminated<R>(_ bytes: [UInt8], _ body: (UnsafeMutableRawPointer, Int) -> R) -> R {
    withUnsafeTemporaryAllocation(byteCount: bytes.count + 1, alignment: 16) { buffer in
        let base = buffer.baseAddress!
        bytes.withUnsafeBytes { base.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(base), byteCount: $0.count) }
        base.storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        return body(base, bytes.count)
    }
}
