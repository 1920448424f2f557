// SPDX-License-Identifier: MIT
// Strict RFC 8259 JSON validation over raw UTF-8 bytes, stdlib only.
//
// The validator only answers "is this one complete JSON text?"; it builds no
// values. It makes a single forward pass over the bytes, never creates a
// Swift String (that would copy and repair invalid UTF-8 instead of
// rejecting it), and is iterative so hostile nesting cannot overflow the
// thread stack.
import CQtbusLibc
import CQtbusShims

/// Deepest nesting of arrays/objects accepted (qtbus.h's QTBUS_JSON_MAX_DEPTH); input
/// nested deeper is rejected as invalid.  The cap bounds the container stack to about
/// 1.2 KB and the work an adversarial input can demand, while sitting far beyond the
/// nesting of any realistic message.
private let jsonMaxDepth = Int(QTBUS_JSON_MAX_DEPTH)

/// Returns true when `bytes` is one complete JSON text (RFC 8259), UTF-8 encoded.
///
/// Stricter than the RFC's "MAY accept" latitude in three ways, because the
/// text arrives as a C string and must be safe to hand to any strict consumer:
/// the whole input must be valid UTF-8, a NUL byte anywhere is invalid (it
/// would truncate the C string), and a byte order mark is invalid. Nesting deeper than 10,000 levels is invalid.
/// Lone surrogate *escapes* (`"\ud800"`) are accepted, as RFC 8259's grammar
/// allows them.
func _isValidJSON(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return false }
    var r = JSONReader(base: base, end: bytes.count)
    var stack = JSONContainerStack()

    // Each trip round this loop parses one value; the inner loop then closes
    // every container that value completes. Together they replace the
    // recursion of a descent parser with `stack`.
    while true {
        r.skipWhitespace()
        guard r.i < r.end else { return false }
        switch r.byte(r.i) {
        case UInt8(ascii: "{"):
            r.i += 1
            // Pushed even when empty so "{}" at the innermost level still
            // counts toward the depth cap.
            guard stack.push(object: true) else { return false }
            r.skipWhitespace()
            if r.i < r.end && r.byte(r.i) == UInt8(ascii: "}") {
                r.i += 1
                stack.pop()
                break
            }
            guard r.memberKey() else { return false }
            continue
        case UInt8(ascii: "["):
            r.i += 1
            guard stack.push(object: false) else { return false }
            r.skipWhitespace()
            if r.i < r.end && r.byte(r.i) == UInt8(ascii: "]") {
                r.i += 1
                stack.pop()
                break
            }
            continue
        case UInt8(ascii: "\""):
            r.i += 1
            guard r.string() else { return false }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard r.number() else { return false }
        case UInt8(ascii: "t"):
            guard r.literal("true") else { return false }
        case UInt8(ascii: "f"):
            guard r.literal("false") else { return false }
        case UInt8(ascii: "n"):
            guard r.literal("null") else { return false }
        default:
            // Includes a BOM, NUL, and any non-ASCII byte: none can start a value.
            return false
        }

        // A value just ended.
        while true {
            r.skipWhitespace()
            if stack.depth == 0 { return r.i == r.end }
            guard r.i < r.end else { return false }
            let b = r.byte(r.i)
            r.i += 1
            if b == UInt8(ascii: ",") {
                // Requiring a key (or a value, via the outer loop) right after
                // the comma is what rejects trailing commas.
                if stack.inObject {
                    guard r.memberKey() else { return false }
                }
                break
            }
            guard b == (stack.inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                return false
            }
            stack.pop()
        }
    }
}

/// One bit per open container (1 = object, 0 = array). The first 64 levels
/// live in a register-sized word so ordinary documents never allocate; the
/// rest spill to a heap block allocated once, only past 64 levels.
private struct JSONContainerStack: ~Copyable {
    private static let spillWords = (jsonMaxDepth - 64 + 63) / 64

    private var low: UInt64 = 0
    private var spill: UnsafeMutablePointer<UInt64>? = nil
    private(set) var depth = 0
    /// Cached kind of the innermost container, read after every value.
    private(set) var inObject = false

    deinit { free(spill) }

    mutating func push(object: Bool) -> Bool {
        guard depth < jsonMaxDepth else { return false }
        let slot = depth
        depth += 1
        inObject = object
        if slot < 64 {
            let mask: UInt64 = 1 << UInt64(slot)
            if object { low |= mask } else { low &= ~mask }
        } else {
            let words: UnsafeMutablePointer<UInt64>
            if let s = spill {
                words = s
            } else {
                // Rare (past 64 levels) and small: waits rather than adding a status.
                words = allocateWaiting(UInt64.self, capacity: Self.spillWords)
                words.initialize(repeating: 0, count: Self.spillWords)
                spill = words
            }
            let bit = slot - 64
            let mask: UInt64 = 1 << UInt64(bit & 63)
            if object { words[bit >> 6] |= mask } else { words[bit >> 6] &= ~mask }
        }
        return true
    }

    /// Only called with depth > 0.
    mutating func pop() {
        depth -= 1
        guard depth > 0 else {
            inObject = false
            return
        }
        let slot = depth - 1
        if slot < 64 {
            inObject = low & (1 << UInt64(slot)) != 0
        } else {
            let bit = slot - 64
            // spill is non-nil: slot >= 64 was reached by a push.
            inObject = spill.unsafelyUnwrapped[bit >> 6] & (1 << UInt64(bit & 63)) != 0
        }
    }
}

/// Cursor over the input. Reads go through `load(as: UInt8.self)` on the raw
/// pointer so we never assume how the caller's memory is bound (C strings
/// arrive as CChar).
private struct JSONReader {
    let base: UnsafeRawPointer
    let end: Int
    var i = 0

    @inline(__always)
    func byte(_ at: Int) -> UInt8 {
        base.load(fromByteOffset: at, as: UInt8.self)
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while i < end {
            let b = byte(i)
            guard b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 else { return }
            i += 1
        }
    }

    /// Entered on the literal's first byte, which the caller already matched.
    @inline(__always)
    mutating func literal(_ word: StaticString) -> Bool {
        let n = word.utf8CodeUnitCount
        guard end - i >= n else { return false }
        let w = word.utf8Start
        for k in 1..<n where byte(i + k) != w[k] { return false }
        i += n
        return true
    }

    /// An object member's key and colon; the value is left to the main loop.
    mutating func memberKey() -> Bool {
        skipWhitespace()
        guard i < end, byte(i) == UInt8(ascii: "\"") else { return false }
        i += 1
        guard string() else { return false }
        skipWhitespace()
        guard i < end, byte(i) == UInt8(ascii: ":") else { return false }
        i += 1
        return true
    }

    /// Entered just past the opening quote; leaves `i` past the closing one.
    /// UTF-8 is checked here only: outside strings every legal byte is ASCII
    /// structure, so any other byte there already fails the grammar.
    mutating func string() -> Bool {
        while i < end {
            let b = byte(i)
            if b == UInt8(ascii: "\"") {
                i += 1
                return true
            }
            if b == UInt8(ascii: "\\") {
                guard escape() else { return false }
            } else if b < 0x20 {
                // Raw control characters (NUL included) must be escaped.
                return false
            } else if b < 0x80 {
                i += 1
            } else {
                guard utf8Scalar() else { return false }
            }
        }
        return false
    }

    private mutating func escape() -> Bool {
        guard end - i >= 2 else { return false }
        switch byte(i + 1) {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"),
            UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
            UInt8(ascii: "r"), UInt8(ascii: "t"):
            i += 2
            return true
        case UInt8(ascii: "u"):
            guard end - i >= 6 else { return false }
            for k in 2..<6 where !Self.isHex(byte(i + k)) { return false }
            i += 6
            return true
        default:
            return false
        }
    }

    @inline(__always)
    private static func isHex(_ b: UInt8) -> Bool {
        if b &- UInt8(ascii: "0") < 10 { return true }
        // Folding to lower case makes 'A'...'F' and 'a'...'f' one range.
        return (b | 0x20) &- UInt8(ascii: "a") < 6
    }

    /// One multi-byte scalar (the rules live in `utf8ScalarLength`, Names.swift).
    private mutating func utf8Scalar() -> Bool {
        let n = utf8ScalarLength(base + i, available: end - i)
        i += n
        return n > 0
    }

    /// Entered on '-' or a digit. Only checks the grammar; what may follow is
    /// the caller's business, which is how "01", "1.2.3" and "1x" get rejected.
    mutating func number() -> Bool {
        if byte(i) == UInt8(ascii: "-") {
            i += 1
            guard i < end else { return false }
        }
        let first = byte(i)
        if first == UInt8(ascii: "0") {
            i += 1
        } else if first &- UInt8(ascii: "1") < 9 {
            i += 1
            _ = digits()
        } else {
            return false
        }
        if i < end && byte(i) == UInt8(ascii: ".") {
            i += 1
            guard digits() else { return false }
        }
        if i < end && byte(i) | 0x20 == UInt8(ascii: "e") {
            i += 1
            if i < end && (byte(i) == UInt8(ascii: "+") || byte(i) == UInt8(ascii: "-")) {
                i += 1
            }
            guard digits() else { return false }
        }
        return true
    }

    /// Consumes [0-9]*; true when at least one digit was consumed.
    @inline(__always)
    private mutating func digits() -> Bool {
        let start = i
        while i < end && byte(i) &- UInt8(ascii: "0") < 10 { i += 1 }
        return i > start
    }
}
