// SPDX-License-Identifier: MIT
// Delivery order (SubList.insert and the merge in Dispatch.swift) through the public
// entry points: priority descending, ties in subscription order, and at equal priority
// subtype-specific subscriptions before whole-type ones.
import Testing
import Glibc
import CQtbusShims
import QTEventBusTestSupport
@testable import QTBusEngine

/// The names logged by one dispatch.
private func names(_ log: Recorder<String>) -> [String] {
    log.values.map { String($0.prefix { $0 != ":" }) }
}

extension Engine {
    @Suite("SubList order")
    struct SubListOrderTests {

        @Test("higher priority first; equal priorities in subscription order")
        func priorities() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let plan: [(String, Int32)] = [
                ("a0", 0), ("b10", 10), ("c-5", -5), ("d10", 10), ("e3", 3),
                ("fmax", .max), ("gmin", .min), ("h0", 0), ("i3", 3), ("jmax", .max), ("k-5", -5),
            ]
            let probes = plan.map { Probe($0.0, log) }
            for (p, (_, prio)) in zip(probes, plan) { mustSubscribe(bus, "Order", p, priority: prio) }
            #expect(dispatch(bus, "Order") == Int32(plan.count))
            #expect(names(log) == ["fmax", "jmax", "b10", "d10", "e3", "i3", "a0", "h0", "c-5", "k-5", "gmin"])
            withExtendedLifetime(probes) {}
        }

        @Test("40 subscriptions at one priority are delivered in subscription order")
        func ties() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let probes = (0..<40).map { Probe("s\($0)", log) }
            for p in probes { mustSubscribe(bus, "Tie", p, priority: 7) }
            #expect(dispatch(bus, "Tie") == 40)
            #expect(names(log) == probes.map(\.name))
            withExtendedLifetime(probes) {}
        }

        @Test("insertion after disposals keeps priority then subscription order")
        func orderAfterChurn() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let p = (0..<8).map { Probe("p\($0)", log) }
            let t0 = mustSubscribe(bus, "Churn", p[0], priority: 5)  // head
            mustSubscribe(bus, "Churn", p[1], priority: 5)
            let t2 = mustSubscribe(bus, "Churn", p[2], priority: 1)
            mustSubscribe(bus, "Churn", p[3], priority: 1)
            let t4 = mustSubscribe(bus, "Churn", p[4], priority: 0)  // tail
            #expect(_qtbus_token_dispose(t0) == OK)
            #expect(_qtbus_token_dispose(t4) == OK)
            #expect(_qtbus_token_dispose(t2) == OK)
            mustSubscribe(bus, "Churn", p[5], priority: 1)  // after p3
            mustSubscribe(bus, "Churn", p[6], priority: 5)  // after p1
            mustSubscribe(bus, "Churn", p[7], priority: -1)  // new tail
            #expect(dispatch(bus, "Churn") == 5)
            #expect(names(log) == ["p1", "p6", "p3", "p5", "p7"])
            withExtendedLifetime(p) {}
        }

        @Test("at equal priority, subtype-specific subscriptions run before whole-type ones")
        func specificBeforeWhole() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let w1 = Probe("W1", log), s1 = Probe("S1", log), w2 = Probe("W2", log), s2 = Probe("S2", log)
            let s3 = Probe("S3", log), w3 = Probe("W3", log), sb = Probe("Sb", log), w4 = Probe("W4", log)
            mustSubscribe(bus, "Mix", w1, priority: 0)
            mustSubscribe(bus, "Mix", s1, subtypes: ["a"], priority: 0)
            mustSubscribe(bus, "Mix", w2, priority: 5)
            mustSubscribe(bus, "Mix", s2, subtypes: ["a"], priority: 5)
            mustSubscribe(bus, "Mix", s3, subtypes: ["a"], priority: -1)
            mustSubscribe(bus, "Mix", w3, priority: 0)
            mustSubscribe(bus, "Mix", sb, subtypes: ["b"], priority: 100)
            mustSubscribe(bus, "Mix", w4, priority: -1)

            #expect(dispatch(bus, "Mix", subtype: "a") == 7)
            #expect(names(log) == ["S2", "W2", "S1", "W1", "W3", "S3", "W4"])
            log.clear()
            #expect(dispatch(bus, "Mix", subtype: "b") == 5)
            #expect(names(log) == ["Sb", "W2", "W1", "W3", "W4"])
            log.clear()
            #expect(dispatch(bus, "Mix") == 4, "no subtype: whole-type subscriptions only")
            #expect(names(log) == ["W2", "W1", "W3", "W4"])
            log.clear()
            #expect(dispatch(bus, "Mix", subtype: "zzz") == 4)
            #expect(names(log) == ["W2", "W1", "W3", "W4"])
            withExtendedLifetime([w1, s1, w2, s2, s3, w3, sb, w4]) {}
        }

        @Test("a subscription listing several subtypes (one twice) receives each event once, in its slot")
        func multiSubtype() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let log = Recorder<String>()
            let first = Probe("first", log), multi = Probe("multi", log), last = Probe("last", log)
            mustSubscribe(bus, "Multi", first, subtypes: ["x"], priority: 1)
            mustSubscribe(bus, "Multi", multi, subtypes: ["x", "y", "x"], priority: 1)
            mustSubscribe(bus, "Multi", last, subtypes: ["y", "x"], priority: 1)
            #expect(dispatch(bus, "Multi", subtype: "x", data: "1") == 3)
            #expect(dispatch(bus, "Multi", subtype: "y", data: "2") == 2)
            #expect(dispatch(bus, "Multi", subtype: "z", data: "3") == 0)
            #expect(log.values == ["first:1", "multi:1", "last:1", "multi:2", "last:2"])
            #expect(countSubscribers(bus, "Multi") == 3)
            #expect(countSubscribers(bus, "Multi", "x") == 3)
            #expect(countSubscribers(bus, "Multi", "y") == 2)
            withExtendedLifetime([first, multi, last]) {}
        }
    }
}
