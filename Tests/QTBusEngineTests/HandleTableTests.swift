// SPDX-License-Identifier: MIT
// HandleTable (HandleTable.swift): generation-counted ids, and the same promises seen
// through the public token and bag entry points.
import Testing
import Glibc
import CQtbusShims
@testable import QTBusEngine

private func slot(_ id: UInt64) -> UInt64 { id & 0xFFFF_FFFF }
private func generation(_ id: UInt64) -> UInt64 { id >> 32 }

extension Engine {
    @Suite("HandleTable")
    struct HandleTableTests {

        @Test("ids are never 0, are distinct, and look up their value")
        func idsNeverZero() {
            var table = HandleTable<Int>()
            var ids: [UInt64] = []
            for i in 0..<1000 {
                let id = table.insert(i)
                #expect(id != 0)
                ids.append(id)
            }
            #expect(Set(ids).count == 1000)
            for (i, id) in ids.enumerated() { #expect(table.lookup(id) == i) }
            // Remove and re-add everything: reused slots still never yield 0.
            for (i, id) in ids.enumerated() { #expect(table.remove(id) == i) }
            for i in 0..<1000 { #expect(table.insert(i) != 0) }
            #expect(table.lookup(0) == nil)
            #expect(table.remove(0) == nil)
        }

        @Test("a removed id is stale: lookup and a second remove find nothing")
        func removedIsStale() {
            var table = HandleTable<String>()
            let a = table.insert("a")
            let b = table.insert("b")
            let c = table.insert("c")
            #expect(table.remove(b) == "b")
            #expect(table.lookup(b) == nil)
            #expect(table.remove(b) == nil)  // repeated dispose
            #expect(table.lookup(a) == "a")
            #expect(table.lookup(c) == "c")
        }

        @Test("reusing one slot 64 times bumps the generation; every old id stays stale")
        func slotReuseBumpsGeneration() {
            var table = HandleTable<Int>()
            let keeper = table.insert(-1)  // another live slot, must be untouched
            var current = table.insert(0)
            var old: [UInt64] = []
            for i in 1...64 {
                #expect(table.remove(current) == i - 1)
                old.append(current)
                let next = table.insert(i)
                #expect(slot(next) == slot(current), "the freed slot is reused")
                #expect(generation(next) > generation(current), "generation moves on")
                #expect(next != current)
                current = next
            }
            #expect(Set(old).count == 64)
            for id in old {
                #expect(table.lookup(id) == nil)
                #expect(table.remove(id) == nil)
            }
            #expect(table.lookup(current) == 64)
            #expect(table.lookup(keeper) == -1)
        }

        @Test("forged ids are rejected")
        func forgedIds() {
            var table = HandleTable<Int>()
            let a = table.insert(7)
            let forged: [UInt64] = [
                0,
                slot(a),  // generation 0
                (generation(a) + 1) << 32 | slot(a),  // future generation
                generation(a) << 32 | (slot(a) + 1),  // slot never used
                generation(a) << 32 | 0xFFFF_FFFF,  // slot far out of range
                UInt64.max,
                0xFFFF_FFFF_0000_0000 | slot(a),
            ]
            for id in forged {
                #expect(table.lookup(id) == nil, "forged id \(id)")
                #expect(table.remove(id) == nil, "forged id \(id)")
            }
            #expect(table.lookup(a) == 7, "forged removes left the real one alone")
        }

        // MARK: Through the C entry points

        @Test("token ids: never 0, stale after dispose, slot reuse leaves old ids stale")
        func tokensViaC() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            var old: [qtbus_token] = []
            let probe = Probe("p")
            for _ in 0..<64 {
                let t = mustSubscribe(bus, "HandleT", probe)
                #expect(t.id != 0)
                #expect(_qtbus_token_is_active(t) == 1)
                #expect(_qtbus_token_dispose(t) == OK)
                #expect(_qtbus_token_is_active(t) == 0)
                old.append(t)
            }
            #expect(Set(old.map(\.id)).count == 64, "every reuse yields a new id")
            let live = mustSubscribe(bus, "HandleT", probe)
            for t in old {
                #expect(_qtbus_token_dispose(t) == ESTALE)
                #expect(_qtbus_token_is_active(t) == 0)
            }
            #expect(_qtbus_token_is_active(live) == 1, "stale disposes did not touch the slot's new owner")
            #expect(dispatch(bus, "HandleT") == 1)
            #expect(probe.calls == 1)
            #expect(probe.releases == 64)
            for id: UInt64 in [0, 1, UInt64.max, live.id &+ (1 << 32), live.id ^ 0xFFFF] {
                #expect(_qtbus_token_dispose(qtbus_token(id: id)) == ESTALE)
                #expect(_qtbus_token_is_active(qtbus_token(id: id)) == 0)
            }
            #expect(_qtbus_token_is_active(live) == 1)
            withExtendedLifetime(probe) {}
        }

        @Test("bag ids: never 0, stale after dispose, forged ids rejected")
        func bagsViaC() {
            var old: [qtbus_bag] = []
            for _ in 0..<16 {
                var bag = qtbus_bag(id: 0)
                #expect(_qtbus_bag_create(&bag) == OK)
                #expect(bag.id != 0)
                #expect(_qtbus_bag_dispose(bag) == OK)
                #expect(_qtbus_bag_dispose(bag) == ESTALE)
                old.append(bag)
            }
            #expect(Set(old.map(\.id)).count == 16)
            #expect(_qtbus_bag_create(nil) == EINVAL)
            for id: UInt64 in [0, UInt64.max, 0xFFFF_FFFF] {
                #expect(_qtbus_bag_dispose(qtbus_bag(id: id)) == ESTALE)
            }
        }
    }
}
