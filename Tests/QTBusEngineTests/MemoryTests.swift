// SPDX-License-Identifier: MIT
// Memory.swift: the Vector the engine's records hold (tokens of a bag, retired objects,
// a bus's commands), and the sticky store built on the name table.
import Testing
import Glibc
@testable import QTBusEngine

@Suite("Memory")
struct MemoryTests {
    @Test func vectorKeepsOrderThroughGrowthAndRemovals() {
        var v = Vector<Int>()
        defer { v.free() }
        #expect(v.isEmpty)
        for i in 0..<100 {
            let appended = v.tryAppend(i)
            #expect(appended)
        }
        #expect(v.count == 100)
        // Removing from the middle keeps the order of the rest.
        let removed = v.removeFirst { $0 == 50 }
        let removedAgain = v.removeFirst { $0 == 50 }
        #expect(removed)
        #expect(!removedAgain, "absent: nothing removed")
        #expect(v.count == 99 && v[49] == 49 && v[50] == 51)
        let first = v.removeFirst()
        let last = v[v.count - 1]
        #expect(first == 0 && last == 99)
        v.retain { $0 % 2 == 0 }
        var seen: [Int] = []
        v.forEach { seen.append($0) }
        #expect(seen == Array(stride(from: 2, through: 98, by: 2)).filter { $0 != 50 })
    }

    @Test func reserveMakesRoomThatAppendReservedUses() {
        var v = Vector<UInt64>()
        defer { v.free() }
        let reserved = v.reserve(3)
        #expect(reserved)
        v.appendReserved(7)
        v.appendReserved(8)
        v.appendReserved(9)
        #expect(v.count == 3 && v[0] == 7 && v[2] == 9)
        v.free()
        #expect(v.isEmpty && v.base == nil)
    }

    @Test func tryAllocateIsSixteenByteAligned() {
        for n in [1, 3, 17, 1000] {
            let p = tryAllocate(UInt8.self, capacity: n)!
            #expect(Int(bitPattern: p) % 16 == 0)
            free(p)
        }
    }
}
