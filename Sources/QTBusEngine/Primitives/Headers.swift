// SPDX-License-Identifier: MIT
// Event headers (qtbus.h, "Event headers"): the rule a header follows, written once for
// C and Swift (the C boundary records the problem as the call's reason, the Swift API
// traps with it: `_qtEngineHeadersProblem`), and the header block: the headers of one
// event, copied once, immutable and reference-counted, so every delivery that outlives
// the dispatch (a payload) shares it as it shares the request.
//
// A block holds the given headers (a repeated name once, with its last value, at its
// first place) and then the inherited ones.  Each block also names its `inheritable`
// block: the one holding only its `traceparent`, `tracestate` and `baggage` (itself when
// it has no other header; nil when it has none of them).  That is what a thread handling
// the event keeps as its context (`ThreadRecord.handling`), so a dispatch that sets no
// header of its own inherits by taking that block as its own, with no copy.
import CQtbusShims
import CQtbusLibc

let maxHeaders = 32
let maxHeaderName = 64
let maxHeaderValue = 4096
let maxHeaderBytes = 16384

/// Why the headers given to a dispatch break the rules; `index` is the header's place
/// in what was given.
package struct HeaderProblem {
    package let reason: StaticString
    package let index: Int
}

/// RFC 9110's token characters (tchar: letters, digits and !#$%&'*+-.^_`|~) as a bit
/// per byte, for bytes 0 to 127 (none above is one): checking a name is a load and a
/// test per byte.
private let tcharLow: UInt64 = 0x03FF_6CFA_0000_0000  // ! # $ % & ' * + - . 0-9
private let tcharHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE  // A-Z ^ _ ` a-z | ~

/// Whether `c` is an RFC 9110 token character (tchar).
@inline(__always)
private func isTokenByte(_ c: UInt8) -> Bool {
    if c < 64 { return tcharLow >> UInt64(c) & 1 != 0 }
    if c < 128 { return tcharHigh >> UInt64(c - 64) & 1 != 0 }
    return false
}

/// Why one header breaks the rules (nil: it follows them).  `name` and `value` are
/// NUL-terminated.
func headerProblem(name: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?) -> StaticString? {
    guard let name else { return "a header's name is NULL" }
    guard let value else { return "a header's value is NULL (the empty string is a value)" }
    let n = strnlen(name, maxHeaderName + 1)
    if n == 0 { return "a header's name is empty" }
    if n > maxHeaderName { return "a header's name is longer than 64 bytes" }
    let nameBytes = UnsafeRawPointer(name).assumingMemoryBound(to: UInt8.self)
    for i in 0..<n where !isTokenByte(nameBytes[i]) {
        return "a header's name has a byte that is not an RFC 9110 token character"
    }
    if n >= 6 && strncasecmp(name, "qtbus-", 6) == 0 {
        return "a header's name starts \"Qtbus-\" (in some letter case): the NATS bridge's own"
    }
    let v = strnlen(value, maxHeaderValue + 1)
    if v > maxHeaderValue { return "a header's value is longer than 4,096 bytes" }
    let valueBytes = UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self)
    if memchr(value, 0x0D, v) != nil || memchr(value, 0x0A, v) != nil {
        return "a header's value has a CR or LF"
    }
    if !validateUTF8(UnsafeBufferPointer(start: valueBytes, count: v)) {
        return "a header's value is not UTF-8 (RFC 3629)"
    }
    return nil
}

/// Checks the `count` headers at `headers` and merges a repeated name: fills `first`
/// with the index of each name's first place and `last` with that of its last value
/// (room for `maxHeaders` each) and returns how many names there are; or the problem.
private func merge(
    _ headers: UnsafePointer<qtbus_header>?, _ count: Int, _ first: UnsafeMutablePointer<Int>,
    _ last: UnsafeMutablePointer<Int>
) -> (names: Int, problem: HeaderProblem?) {
    if count == 0 { return (0, nil) }
    // size_t arrives as Int: above Int.max it is negative.
    if count < 0 { return (0, HeaderProblem(reason: "event->header_count is larger than memory", index: 0)) }
    guard let headers else {
        return (0, HeaderProblem(reason: "event->headers is NULL with a header_count above 0", index: 0))
    }
    var names = 0
    var bytes = 0
    for i in 0..<count {
        let h = headers[i]
        if let problem = headerProblem(name: h.name, value: h.value) {
            return (0, HeaderProblem(reason: problem, index: i))
        }
        var place = -1
        for k in 0..<names where strcmp(headers[first[k]].name, h.name) == 0 {
            place = k
            break
        }
        if place >= 0 {
            last[place] = i
            continue
        }
        if names == maxHeaders {
            return (0, HeaderProblem(reason: "more than 32 headers (a repeated name counted once)", index: i))
        }
        first[names] = i
        last[names] = i
        names += 1
    }
    for k in 0..<names { bytes += strlen(headers[first[k]].name!) + strlen(headers[last[k]].value!) }
    if bytes > maxHeaderBytes {
        return (0, HeaderProblem(reason: "the headers' names and values take more than 16,384 bytes", index: count - 1))
    }
    return (names, nil)
}

/// Why the `count` headers at `headers` break the rules (nil: they follow them): the one
/// rule, for the C boundary and the Swift API.
package func _qtEngineHeadersProblem(_ headers: UnsafePointer<qtbus_header>?, _ count: Int) -> HeaderProblem? {
    withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * maxHeaders) { buffer in
        merge(headers, count, buffer.baseAddress!, buffer.baseAddress! + maxHeaders).problem
    }
}

/// One event's headers: this header, then `count` entries (name and value pointers),
/// then the strings they point to, NUL-terminated, in one allocation.
struct HeaderBlock {
    var refs: UInt64 = 1
    let count: Int
    /// The block of this one's inheritable headers (see the top of this file): this one,
    /// not retained, or another, retained; nil when it has none.
    var inheritable: UnsafeMutablePointer<HeaderBlock>?
}

private struct HeaderEntry {
    let name: UnsafePointer<CChar>
    let value: UnsafePointer<CChar>
}

private let headerBlockHeader = (MemoryLayout<HeaderBlock>.stride + 15) & ~15

extension UnsafeMutablePointer where Pointee == HeaderBlock {
    @inline(__always)
    private var entries: UnsafeMutablePointer<HeaderEntry> {
        (UnsafeMutableRawPointer(self) + headerBlockHeader).assumingMemoryBound(to: HeaderEntry.self)
    }

    /// The header at `index` (< count), in qtbus_event_header_at's order.
    func header(at index: Int) -> (name: UnsafePointer<CChar>, value: UnsafePointer<CChar>) {
        (entries[index].name, entries[index].value)
    }

    /// The value of the header named `name`, or nil.
    func value(of name: UnsafePointer<CChar>) -> UnsafePointer<CChar>? {
        for i in 0..<pointee.count where strcmp(entries[i].name, name) == 0 { return entries[i].value }
        return nil
    }

    @inline(__always)
    func retain() {
        _ = qtshim_atomic_fetch_add_u64(field(&pointee.refs), 1)
    }

    /// Drops a reference; the last one frees the block (and its inheritable one's).
    func release() {
        guard droppedLastReference(self, field(&pointee.refs)) else { return }
        let child = pointee.inheritable
        free(self)
        if let child, child != self { child.release() }
    }
}

/// Whether `name` is one a dispatch inherits from the event being handled (W3C Trace
/// Context and Baggage).
private func isInherited(_ name: UnsafePointer<CChar>) -> Bool {
    strcmp(name, "traceparent") == 0 || strcmp(name, "tracestate") == 0 || strcmp(name, "baggage") == 0
}

/// One header to copy into a block.
private struct HeaderPair {
    var name: UnsafePointer<CChar>
    var value: UnsafePointer<CChar>
}

/// A block of `count` pairs at `pairs` (those `isInherited` only, when `onlyInherited`),
/// copied; nil when out of memory.
private func makeBlock(_ pairs: UnsafePointer<HeaderPair>, _ count: Int, onlyInherited: Bool)
    -> UnsafeMutablePointer<HeaderBlock>?
{
    var kept = 0
    var bytes = headerBlockHeader
    for i in 0..<count where !onlyInherited || isInherited(pairs[i].name) {
        kept += 1
        bytes += MemoryLayout<HeaderEntry>.stride + strlen(pairs[i].name) + 1 + strlen(pairs[i].value) + 1
    }
    guard let raw = malloc(bytes) else { return nil }
    let block = raw.bindMemory(to: HeaderBlock.self, capacity: 1)
    block.initialize(to: HeaderBlock(count: kept, inheritable: nil))
    let entries = (raw + headerBlockHeader).bindMemory(to: HeaderEntry.self, capacity: kept)
    var text = (raw + headerBlockHeader + kept * MemoryLayout<HeaderEntry>.stride).assumingMemoryBound(to: CChar.self)
    var e = 0
    for i in 0..<count where !onlyInherited || isInherited(pairs[i].name) {
        let n = strlen(pairs[i].name) + 1
        let v = strlen(pairs[i].value) + 1
        memcpy(text, pairs[i].name, n)
        memcpy(text + n, pairs[i].value, v)
        (entries + e).initialize(to: HeaderEntry(name: UnsafePointer(text), value: UnsafePointer(text + n)))
        text += n + v
        e += 1
    }
    return block
}

/// What `makeHeaders` made.
enum MadeHeaders {
    /// `owned`: the block is the caller's to release; otherwise it is the context itself,
    /// borrowed (nothing was given), or nil.
    case made(UnsafeMutablePointer<HeaderBlock>?, owned: Bool)
    /// QTBUS_EINVAL (its reason recorded) or QTBUS_ENOMEM.
    case failed(Int32)
}

/// The headers of a dispatch: the `count` given at `headers` (checked: a problem is
/// recorded as the call's reason), then those of `context` (the inheritable block of
/// the event being handled) that were not given.
func makeHeaders(
    _ headers: UnsafePointer<qtbus_header>?, _ count: Int, inheriting context: UnsafeMutablePointer<HeaderBlock>?
) -> MadeHeaders {
    withUnsafeTemporaryAllocation(of: Int.self, capacity: 2 * maxHeaders) { buffer -> MadeHeaders in
        let first = buffer.baseAddress!
        let last = first + maxHeaders
        let (names, problem) = merge(headers, count, first, last)
        if let problem { return .failed(fail(QTBUS_EINVAL, problem.reason)) }
        if names == 0 { return .made(context, owned: false) }
        return withUnsafeTemporaryAllocation(of: HeaderPair.self, capacity: maxHeaders + 3) { pairs -> MadeHeaders in
            let p = pairs.baseAddress!
            var n = 0
            for k in 0..<names {
                p[n] = HeaderPair(name: headers![first[k]].name!, value: headers![last[k]].value!)
                n += 1
            }
            if let context {
                for i in 0..<context.pointee.count {
                    let h = context.header(at: i)
                    var given = false
                    for k in 0..<names where strcmp(p[k].name, h.name) == 0 { given = true }
                    if !given {
                        p[n] = HeaderPair(name: h.name, value: h.value)
                        n += 1
                    }
                }
            }
            guard let block = makeBlock(p, n, onlyInherited: false) else { return .failed(QTBUS_ENOMEM.rawValue) }
            var inherited = 0
            for i in 0..<n where isInherited(p[i].name) { inherited += 1 }
            if inherited == n {
                block.pointee.inheritable = block
            } else if inherited > 0 {
                guard let child = makeBlock(p, n, onlyInherited: true) else {
                    block.release()
                    return .failed(QTBUS_ENOMEM.rawValue)
                }
                child.pointee.inheritable = child
                block.pointee.inheritable = child
            }
            return .made(block, owned: true)
        }
    }
}
