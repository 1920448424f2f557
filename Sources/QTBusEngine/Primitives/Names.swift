// SPDX-License-Identifier: MIT
// Event type and subtype names as the C side hands them over: NUL-terminated bytes.
//
// The dispatch path must not build a Swift String (a String hash and lookup costs
// more than the rest of bench-c's "dispatch, 0 handlers" row), so names are scanned
// once as bytes: one pass yields the length and a hash, and a table hit is confirmed
// with memcmp against the stored copy.  UTF-8 validation only runs when a name is
// stored or a lookup misses: a name that matches a stored one byte for byte was
// validated when it was stored.
import CQtbusShims
import CQtbusLibc

/// The longest name, in bytes, the contract allows.
let maxNameLength = 255

/// A borrowed C name, scanned.
struct CName {
    let bytes: UnsafePointer<CChar>
    let length: Int
    let hash: UInt64

    /// Scans `bytes`; nil when the name is empty or longer than `maxNameLength` (then
    /// no stored name can equal it).  Does not check UTF-8: see `isValidUTF8`.
    ///
    /// strlen is libc's vectorised one (and sanitizers know it); the hash then reads
    /// whole 8-byte words within the length, never past the NUL.
    @inline(__always)
    init?(_ bytes: UnsafePointer<CChar>) {
        guard let measured = CName(measuring: bytes) else { return nil }
        self = measured.hashed
    }

    /// Measures `bytes` as `init?(_:)` does, without the hash (0): for qtbus_dispatch,
    /// which hashes the name only when it must look it up (`hashed`).
    @inline(__always)
    init?(measuring bytes: UnsafePointer<CChar>) {
        let n = strlen(bytes)
        if n == 0 || n > maxNameLength { return nil }
        self.bytes = bytes
        self.length = n
        self.hash = 0
    }
    /// A measured name with its hash.
    @inline(__always)
    var hashed: CName { CName(bytes: bytes, length: length, hash: hashBytes(UnsafeRawPointer(bytes), length)) }
    /// A name scanned before (a stored one's `cName`).
    @inline(__always)
    init(bytes: UnsafePointer<CChar>, length: Int, hash: UInt64) {
        self.bytes = bytes
        self.length = length
        self.hash = hash
    }

    /// Whether two scanned names are the same bytes.
    @inline(__always)
    func isSame(as other: CName) -> Bool {
        hash == other.hash && length == other.length
            && sameBytes(UnsafeRawPointer(bytes), UnsafeRawPointer(other.bytes), length)
    }

    /// The name's bytes as a key for the cold paths that use Swift collections.
    var key: [UInt8] {
        UnsafeRawPointer(bytes).withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    /// The full check of the contract's name rules (length was checked by init).
    var isValidUTF8: Bool {
        UnsafeRawPointer(bytes).withMemoryRebound(to: UInt8.self, capacity: length) {
            validateUTF8(UnsafeBufferPointer(start: $0, count: length))
        }
    }
}

/// A name the engine owns: a NUL-terminated copy plus its length and hash.
struct StoredName {
    let bytes: UnsafeMutablePointer<CChar>
    let length: Int
    let hash: UInt64

    /// nil when out of memory.
    init?(copying name: CName) {
        guard let bytes = tryAllocate(CChar.self, capacity: name.length + 1) else { return nil }
        self.bytes = bytes
        bytes.initialize(from: name.bytes, count: name.length)
        bytes[name.length] = 0
        length = name.length
        hash = name.hash
    }

    func free() { CQtbusLibc.free(bytes) }

    /// The stored name as a scanned one (nothing scanned again).
    @inline(__always)
    var cName: CName { CName(bytes: bytes, length: length, hash: hash) }

    @inline(__always)
    func isSame(as name: CName) -> Bool {
        hash == name.hash && length == name.length
            && sameBytes(UnsafeRawPointer(bytes), UnsafeRawPointer(name.bytes), length)
    }
}

/// The last `r` (1...8) of the bytes at `p`..<`p + end`, as a word, reading only within
/// them: for r >= 4 two overlapping 4-byte loads, below that three single bytes (the
/// small-key read of wyhash).  Equal bytes give equal words for equal lengths.
@inline(__always)
private func tailWord(_ p: UnsafeRawPointer, end: Int, _ r: Int) -> UInt64 {
    if r == 8 { return p.loadUnaligned(fromByteOffset: end - 8, as: UInt64.self) }
    let i = end - r
    if r >= 4 {
        let lo = UInt64(p.loadUnaligned(fromByteOffset: i, as: UInt32.self))
        let hi = UInt64(p.loadUnaligned(fromByteOffset: end - 4, as: UInt32.self))
        return lo | hi << 32
    }
    let b0 = UInt64(p.load(fromByteOffset: i, as: UInt8.self))
    let b1 = UInt64(p.load(fromByteOffset: i + r / 2, as: UInt8.self))
    let b2 = UInt64(p.load(fromByteOffset: end - 1, as: UInt8.self))
    return b0 | b1 << 8 | b2 << 16
}

/// A 64-bit hash of `n` (>= 1) bytes, a word at a time (names are short: a call to a
/// general hash function would cost more than the hashing).
@inline(__always)
func hashBytes(_ p: UnsafeRawPointer, _ n: Int) -> UInt64 {
    var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(n)
    var i = 0
    while n - i > 8 {
        h = (h ^ p.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 32
        i += 8
    }
    h = (h ^ tailWord(p, end: n, n - i)) &* 0xFF51_AFD7_ED55_8CCD
    h ^= h >> 33
    h = h &* 0xC4CE_B9FE_1A85_EC53
    h ^= h >> 29
    return h
}

/// Whether `n` (>= 1) bytes at `a` and `b` are equal: inline words, no call.
@inline(__always)
func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
    var i = 0
    while n - i > 8 {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i += 8
    }
    return tailWord(a, end: n, n - i) == tailWord(b, end: n, n - i)
}

/// Whether two NUL-terminated names of `n` (>= 1) bytes each are the same: the n + 1
/// bytes with their NULs, in whole words (the last one overlapping the one before), so
/// no read goes past either NUL; names under 7 bytes as `sameBytes`.
@inline(__always)
func sameText(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Bool {
    let m = n &+ 1
    if m < 8 { return sameBytes(a, b, n) }
    var i = 0
    while m &- i > 8 {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i &+= 8
    }
    return a.loadUnaligned(fromByteOffset: m &- 8, as: UInt64.self)
        == b.loadUnaligned(fromByteOffset: m &- 8, as: UInt64.self)
}

/// The length of the well-formed multi-byte UTF-8 scalar at `p` (whose first byte is
/// >= 0x80) within `available` bytes, or 0 if there is none (Unicode Table 3-7).
/// Narrowing the second byte's range per lead byte is what rejects overlongs (E0, F0),
/// surrogates (ED) and scalars past U+10FFFF (F4); leads 80...C1 and F5...FF never
/// start one.  Shared by name validation and the JSON validator.
@inline(__always)
func utf8ScalarLength(_ p: UnsafeRawPointer, available: Int) -> Int {
    let trail: Int
    var low: UInt8 = 0x80
    var high: UInt8 = 0xBF
    switch p.load(as: UInt8.self) {
    case 0xC2...0xDF: trail = 1
    case 0xE0:
        trail = 2
        low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: trail = 2
    case 0xED:
        trail = 2
        high = 0x9F
    case 0xF0:
        trail = 3
        low = 0x90
    case 0xF1...0xF3: trail = 3
    case 0xF4:
        trail = 3
        high = 0x8F
    default: return 0
    }
    guard available > trail else { return 0 }  // truncated
    let second = p.load(fromByteOffset: 1, as: UInt8.self)
    guard second >= low && second <= high else { return 0 }
    var k = 2
    while k <= trail {
        guard p.load(fromByteOffset: k, as: UInt8.self) & 0xC0 == 0x80 else { return 0 }
        k += 1
    }
    return trail + 1
}

/// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF, no NUL.
func validateUTF8(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard let base = b.baseAddress else { return true }
    var i = 0
    // ASCII fast path, a word at a time: no byte with the high bit set, and no NUL.
    while i + 8 <= b.count {
        let w = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: i, as: UInt64.self)
        let hasZero = (w &- 0x0101_0101_0101_0101) & ~w & 0x8080_8080_8080_8080
        if w & 0x8080_8080_8080_8080 != 0 || hasZero != 0 { break }
        i += 8
    }
    while i < b.count {
        let c = b[i]
        if c < 0x80 {
            if c == 0 { return false }
            i += 1
            continue
        }
        let n = utf8ScalarLength(UnsafeRawPointer(base + i), available: b.count - i)
        if n == 0 { return false }
        i += n
    }
    return true
}

/// A name the library defines (qtbus.h's string macros, through the shim's functions
/// that return them in static storage), scanned once, when its global is first used.
struct StaticName: @unchecked Sendable {
    // @unchecked: the bytes are static and never written.
    let name: CName

    init(_ text: UnsafePointer<CChar>) { name = CName(text)! }

    var bytes: UnsafePointer<CChar> { name.bytes }

    func isSame(as other: CName) -> Bool { name.isSame(as: other) }
}

/// QTNoSubscriberEvent: its type entries count their subscriptions on the bus, and an
/// event nobody received is dispatched again under this name.
let noSubscriberName = StaticName(qtshim_no_subscriber_type())
