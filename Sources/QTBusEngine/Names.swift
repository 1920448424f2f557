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

/// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF, no NUL.
func validateUTF8(_ b: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    let n = b.count
    while i < n {
        let c = b[i]
        if c < 0x80 {
            if c == 0 { return false }
            i += 1
            continue
        }
        var need = 0
        var lo: UInt8 = 0x80, hi: UInt8 = 0xBF
        switch c {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED: need = 2; hi = 0x9F
        case 0xF0: need = 3; lo = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; hi = 0x8F
        default: return false
        }
        if i + need >= n { return false } // truncated sequence
        let first = b[i + 1]
        if first < lo || first > hi { return false }
        var k = 2
        while k <= need {
            let cc = b[i + k]
            if cc < 0x80 || cc > 0xBF { return false }
            k += 1
        }
        i += need + 1
    }
    return true
}
