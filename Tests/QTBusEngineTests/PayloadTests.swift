// SPDX-License-Identifier: MIT
// Payloads: the copy a queued delivery reads after its dispatch returned.
import Testing
import Glibc
@testable import QTBusEngine

extension Engine {
    @Suite("Payload")
    struct PayloadTests {

        @Test("the header stays 80 bytes, so small events fit glibc's fast bins (blocks <= 128 bytes)")
        func headerSize() {
            // Payload.swift explains the measurement; growing the header silently moves
            // every small queued event one size class up.
            #expect(MemoryLayout<Payload>.stride == 80)
        }

        @Test("bytes, type and subtype are copied, NUL-terminated, data 16-aligned")
        func copies() {
            let data: [UInt8] = [1, 2, 3, 4, 5]
            "Login".withCString { t in
                "alice".withCString { s in
                    data.withUnsafeBytes { d in
                        let p = makePayload(
                            type: CName(t)!, subtype: CName(s), data: d.baseAddress, size: 5,
                            object: nil, objectRelease: nil, parent: nil)!
                        #expect(String(cString: p.type) == "Login")
                        #expect(String(cString: p.subtype!) == "alice")
                        #expect(Int(bitPattern: p.data) % 16 == 0)
                        #expect(Array(UnsafeRawBufferPointer(start: p.data, count: 5)) == data)
                        #expect(p.bytes.load(fromByteOffset: 5, as: UInt8.self) == 0)
                        p.release()

                        let q = makePayload(
                            type: CName(t)!, subtype: nil, data: nil, size: 0,
                            object: nil, objectRelease: nil, parent: nil)!
                        #expect(q.data == nil)
                        #expect(q.subtype == nil)
                        #expect(String(cString: q.type) == "Login")
                        q.release()
                    }
                }
            }
        }
    }
}
