// SPDX-License-Identifier: MIT
// Names (Names.swift): CName length rules, hashing by bytes, strict UTF-8, and the
// NAMES rule of qtbus.h through the entry points.
import Testing
import Glibc
import CQtbusShims
@testable import QTBusEngine

private func cname(_ bytes: [UInt8]) -> (length: Int, hash: UInt64)? {
    withCBytes(bytes) { p in CName(p).map { ($0.length, $0.hash) } }
}

private func validUTF8(_ bytes: [UInt8]) -> Bool {
    withCBytes(bytes) { p in CName(p)!.isValidUTF8 }
}

private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16) }.joined(separator: " ")
}

/// Strict UTF-8 violations (RFC 3629), each wrapped in ASCII so the bad part is not
/// only at the edges.
private let invalidUTF8: [[UInt8]] = [
    // overlong forms
    [0xC0, 0x80], [0xC0, 0xAF], [0xC1, 0xBF],
    [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF],
    [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
    // UTF-16 surrogates U+D800..U+DFFF
    [0xED, 0xA0, 0x80], [0xED, 0xAD, 0xBF], [0xED, 0xB0, 0x80], [0xED, 0xBF, 0xBF],
    // above U+10FFFF
    [0xF4, 0x90, 0x80, 0x80], [0xF4, 0xBF, 0xBF, 0xBF], [0xF5, 0x80, 0x80, 0x80],
    [0xF7, 0xBF, 0xBF, 0xBF], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFC, 0x84, 0x80, 0x80, 0x80, 0x80],
    [0xFE], [0xFF],
    // stray continuation bytes
    [0x80], [0xBF], [0x80, 0x80],
    // bad continuation inside a sequence
    [0xC3, 0x28], [0xE2, 0x28, 0xA1], [0xE2, 0x82, 0x28], [0xF0, 0x28, 0x8C, 0xBC],
    [0xF0, 0x90, 0x28, 0xBC], [0xF0, 0x9F, 0x98, 0x28],
]

/// Sequences cut short: tested at the very end of the name (no bytes follow).
private let truncatedUTF8: [[UInt8]] = [
    [0xC3], [0xE2], [0xE2, 0x82], [0xF0], [0xF0, 0x9F], [0xF0, 0x9F, 0x98], [0xF4, 0x8F, 0xBF],
]

private let validMultibyte: [[UInt8]] = [
    [0xC2, 0x80],  // U+0080, smallest 2-byte
    [0xC3, 0xA9],  // é
    [0xDF, 0xBF],  // U+07FF
    [0xE0, 0xA0, 0x80],  // U+0800, smallest 3-byte
    [0xE2, 0x82, 0xAC],  // €
    [0xED, 0x9F, 0xBF],  // U+D7FF, just below the surrogates
    [0xEE, 0x80, 0x80],  // U+E000, just above
    [0xEF, 0xBF, 0xBF],  // U+FFFF
    [0xF0, 0x90, 0x80, 0x80],  // U+10000, smallest 4-byte
    [0xF0, 0x9F, 0x98, 0x80],  // 😀
    [0xF4, 0x8F, 0xBF, 0xBF],  // U+10FFFF, the last code point
    Array("日本語のイベント".utf8),
    Array("e\u{301}".utf8),  // combining sequence (not normalised: bytes are bytes)
]

extension Engine {
    @Suite("Names")
    struct NamesTests {

        @Test("CName: empty rejected, 1 and 255 bytes accepted, 256 and more rejected")
        func lengthLimits() {
            #expect(cname([]) == nil)
            #expect(cname([0x61])?.length == 1)
            #expect(cname([UInt8](repeating: 0x61, count: 254))?.length == 254)
            #expect(cname([UInt8](repeating: 0x61, count: 255))?.length == 255)
            #expect(cname([UInt8](repeating: 0x61, count: 256)) == nil)
            #expect(cname([UInt8](repeating: 0x61, count: 257)) == nil)
            #expect(cname([UInt8](repeating: 0x61, count: 4096)) == nil)
            // 255 bytes of 3-byte characters is still 255 bytes: accepted.
            let euros = [UInt8](Array(String(repeating: "€", count: 85).utf8))
            #expect(euros.count == 255)
            #expect(cname(euros)?.length == 255)
            #expect(validUTF8(euros))
        }

        @Test("CName hashes bytes: equal bytes at different addresses hash and compare equal")
        func hashByBytes() {
            let a = strdup("LoginEvent")!
            let b = strdup("LoginEvent")!
            let c = strdup("LoginEvenT")!
            defer {
                free(a)
                free(b)
                free(c)
            }
            let na = CName(a)!, nb = CName(b)!, nc = CName(c)!
            #expect(na.hash == nb.hash)
            #expect(na.length == 10)
            #expect(na.hash != nc.hash)
            let stored = StoredName(copying: na)!
            defer { stored.free() }
            #expect(stored.bytes != a, "StoredName owns a copy")
            #expect(stored.isSame(as: nb))
            #expect(!stored.isSame(as: nc))
            #expect(String(cString: stored.bytes) == "LoginEvent")
            // A prefix is a different name even if the stored copy continues.
            let prefix = strdup("Login")!
            defer { free(prefix) }
            #expect(!stored.isSame(as: CName(prefix)!))
        }

        @Test(
            "isValidUTF8 rejects overlong, surrogates, > U+10FFFF, stray and bad continuations",
            arguments: invalidUTF8)
        func rejectsInvalid(_ bad: [UInt8]) {
            #expect(!validUTF8(bad), "\(hex(bad)) alone")
            #expect(!validUTF8(Array("ab".utf8) + bad + Array("cd".utf8)), "\(hex(bad)) inside ASCII")
            #expect(!validUTF8([0xC3, 0xA9] + bad), "\(hex(bad)) after a valid é")
        }

        @Test("isValidUTF8 rejects truncated sequences at the end of the name", arguments: truncatedUTF8)
        func rejectsTruncated(_ bad: [UInt8]) {
            #expect(!validUTF8(bad), "\(hex(bad))")
            #expect(!validUTF8(Array("type".utf8) + bad), "\(hex(bad)) after ASCII")
            #expect(!validUTF8(bad + Array("x".utf8)), "\(hex(bad)) followed by ASCII")
        }

        @Test("isValidUTF8 accepts valid multibyte characters", arguments: validMultibyte)
        func acceptsValid(_ good: [UInt8]) {
            #expect(validUTF8(good), "\(hex(good))")
            #expect(validUTF8(Array("a".utf8) + good + Array("z".utf8)), "\(hex(good)) inside ASCII")
            #expect(validUTF8(good + good), "\(hex(good)) twice")
        }

        @Test("validateUTF8 on a buffer: NUL is rejected, empty is valid, plain ASCII is valid")
        func bufferEdges() {
            let cases: [([UInt8], Bool)] = [
                ([], true), ([0x41], true), ([0x41, 0x00, 0x42], false),
                (Array(0x01...0x7F), true),
            ]
            for (bytes, expected) in cases {
                let result = bytes.withUnsafeBufferPointer { validateUTF8($0) }
                #expect(result == expected, "\(hex(bytes))")
            }
        }

        // MARK: The NAMES rule through the entry points

        @Test("subscribe and dispatch: 255-byte names work, \"\", 256 bytes, invalid UTF-8 and NULL are EINVAL")
        func namesViaC() {
            let bus = newBus()
            let probe = Probe("p")
            let long255 = [UInt8](repeating: 0x54, count: 255)
            let long256 = [UInt8](repeating: 0x54, count: 256)
            let euros = Array(String(repeating: "€", count: 85).utf8)

            #expect(subscribeBytes(bus, long255, probe).status == OK)
            #expect(subscribeBytes(bus, euros, probe, subtypes: [long255]).status == OK)
            #expect(dispatchBytes(bus, long255) == 1)
            #expect(dispatchBytes(bus, euros, subtype: long255) == 1)
            #expect(probe.calls == 2)

            // Each failing subscribe: EINVAL, token {0}, release not called.
            let bad: [[UInt8]] = [[], long256, [0xC0, 0x80], [0xED, 0xA0, 0x80], [0x61, 0xFF], [0xE2, 0x82]]
            for name in bad {
                let r = subscribeBytes(bus, name, probe)
                #expect(r.status == EINVAL, "type \(hex(name))")
                #expect(r.token.id == 0)
                let s = subscribeBytes(bus, Array("Good".utf8), probe, subtypes: [Array("ok".utf8), name])
                #expect(s.status == EINVAL, "subtype \(hex(name))")
                #expect(s.token.id == 0)
                #expect(dispatchBytes(bus, name) == EINVAL, "dispatch type \(hex(name))")
                #expect(dispatchBytes(bus, long255, subtype: name) == EINVAL, "dispatch subtype \(hex(name))")
            }
            #expect(probe.calls == 2, "no failing dispatch delivered anything")
            #expect(countSubscribers(bus, "Good") == 0, "no failing subscribe left a subscription")

            var token = qtbus_token(id: 99)
            #expect(_qtbus_subscribe(bus, nil, nil, probeHandler, probe.userdata, probeRelease, &token) == EINVAL)
            #expect(token.id == 0)
            #expect(_qtbus_subscriber_count(bus, nil, nil) == EINVAL)
            #expect("T".withCString { _qtbus_subscriber_count(bus, $0, "") } == EINVAL)
            #expect(withCBytes(long256) { _qtbus_sticky_clear(bus, $0, nil) } == EINVAL)
            #expect(probe.releases == 0, "release hooks of failed subscribes never run")
            #expect(_qtbus_bus_destroy(bus) == OK)
            #expect(probe.releases == 2)
            withExtendedLifetime(probe) {}
        }
    }
}
