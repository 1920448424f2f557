// SPDX-License-Identifier: MIT
// setTraceHook: a Swift subscription's life as records (subscribe, deliver, dispatch,
// dispose, release), misuse of the bus, a freeWith owner gone, kinds, and replacing or
// removing a hook (its closure let go when the call returns).
import QTBusEngine
import QTEventBusTestSupport
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("Trace hook")
    struct TraceTests {
        private func kinds(_ records: [QTTraceRecord]) -> [QTTraceRecord.Kind] { records.map(\.kind) }

        @Test func recordsASubscriptionsLife() throws {
            let bus = QTEventBus()
            let records = Recorder<QTTraceRecord>()
            try bus.setTraceHook { records.append($0) }
            let token = bus.on(named: "Traced").ofSubType("a").next { _ in }
            #expect(bus.dispatch(named: "Traced", subType: "a") == 1)
            token.dispose()
            let all = records.values
            #expect(kinds(all) == [.subscribe, .deliver, .dispatch, .dispose, .release])
            #expect(all.allSatisfy { $0.token == token.id || $0.kind == .dispatch })
            #expect(all[0].type == "Traced")
            #expect(all[1].type == "Traced" && all[1].subType == "a" && !all[1].queued)
            #expect(all[2].reached == 1 && all[2].duration >= all[1].duration)
            #expect(all[3].function == "qtbus_token_dispose")
            bus.removeTraceHook()
        }

        @Test func misuseAndAGoneOwnerAreRecorded() throws {
            let bus = QTEventBus()
            let records = Recorder<QTTraceRecord>()
            try bus.setTraceHook([.misuse, .dispose]) { records.append($0) }
            // A refusal from C code on this bus (Swift traps on an invalid name first).
            #expect(_qtbus_sticky_clear(bus.cBus, "", nil) == QTBusError.invalidArgument.rawValue)
            #expect(throws: QTBusError.invalidJSON) { try bus.dispatchJSON(name: "N", json: "{") }
            var owner: Owner? = Owner()
            let token = bus.on(PingEvent.self).freeWith(owner!).next { _ in }
            owner = nil
            bus.dispatch(PingEvent(n: 1))
            let all = records.values
            #expect(kinds(all) == [.misuse, .misuse, .dispose])
            #expect(all[0].function == "qtbus_sticky_clear" && all[0].status == QTBusError.invalidArgument.rawValue)
            #expect(all[1].function == "qtbus_dispatch_json" && all[1].status == QTBusError.invalidJSON.rawValue)
            #expect(all[2].function == "owner gone" && all[2].token == token.id)
        }

        @Test func theHooksOwnCallsAreNotTraced() throws {
            let bus = QTEventBus()
            let records = Recorder<QTTraceRecord>()
            try bus.setTraceHook([.dispatch]) { record in
                records.append(record)
                bus.dispatch(named: "FromTheHook")
            }
            bus.dispatch(named: "Outside")
            #expect(records.values.map(\.type) == ["Outside"])
        }

        @Test func replacingOrRemovingLetsTheHookGo() throws {
            let bus = QTEventBus()
            weak var watched: Token?
            let first = Recorder<QTTraceRecord>()
            do {
                let captured = Token()
                watched = captured
                try bus.setTraceHook([.dispatch]) {
                    _ = captured
                    first.append($0)
                }
            }
            bus.dispatch(named: "One")
            #expect(watched != nil)
            let second = Recorder<QTTraceRecord>()
            try bus.setTraceHook([.dispatch]) { second.append($0) }
            #expect(watched == nil, "the replaced hook's closure is released when the call returns")
            bus.dispatch(named: "Two")
            #expect(first.values.map(\.type) == ["One"])
            #expect(second.values.map(\.type) == ["Two"])
            bus.removeTraceHook()
            bus.dispatch(named: "Three")
            #expect(second.count == 1)
        }
    }
}
