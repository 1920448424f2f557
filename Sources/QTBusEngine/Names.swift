// Event type and subtype names as the C side hands them over: NUL-terminated bytes.
//
// The dispatch path must not build a Swift String (a String hash and lookup costs
// 50-80 ns here), so names are scanned once as bytes: one pass yields the length and
// a hash, and a table hit is confirmed with memcmp against the stored copy.  UTF-8
// validation only runs when a name is stored or a lookup misses: a name that matches
// a stored one byte for byte was validated when it was stored.
import Glibc

/// The longest name, in bytes, the contract allows.
let maxNameLength = 255

/// A borrowed C name, scanned.
struct CName {
    let bytes: UnsafePointer<CChar>
    let length: Int
    let hash: UInt64

    /// Scans `bytes`; nil when the name is empty or longer than `maxNameLength` (then
    /// no stored name can equal it).  Does not check UTF-8: see `isValidUTF8`.
    @inline(__always)
    init?(_ bytes: UnsafePointer<CChar>) {
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15
        var n = 0
        while true {
            let b = UInt8(bitPattern: bytes[n])
            if b == 0 { break }
            // rotate-xor: two cheap dependent ops a byte, mixed properly at the end.
            h = ((h << 5) | (h >> 59)) ^ UInt64(b)
            n += 1
            if n > maxNameLength { return nil }
        }
        if n == 0 { return nil }
        self.bytes = bytes
        self.length = n
        self.hash = CName.finish(h, n)
    }

    @inline(__always)
    static func finish(_ h: UInt64, _ n: Int) -> UInt64 {
        var x = h ^ (UInt64(n) &* 0xFF51_AFD7_ED55_8CCD)
        x ^= x >> 33
        x = x &* 0xC4CE_B9FE_1A85_EC53
        x ^= x >> 29
        return x
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

    init(copying name: CName) {
        bytes = .allocate(capacity: name.length + 1)
        bytes.initialize(from: name.bytes, count: name.length)
        bytes[name.length] = 0
        length = name.length
        hash = name.hash
    }

    func free() { bytes.deallocate() }

    @inline(__always)
    func equals(_ name: CName) -> Bool {
        hash == name.hash && length == name.length && memcmp(bytes, name.bytes, length) == 0
    }
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
    case 0xE0: trail = 2; low = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: trail = 2
    case 0xED: trail = 2; high = 0x9F
    case 0xF0: trail = 3; low = 0x90
    case 0xF1...0xF3: trail = 3
    case 0xF4: trail = 3; high = 0x8F
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
