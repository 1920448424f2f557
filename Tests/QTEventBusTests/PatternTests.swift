// SPDX-License-Identifier: MIT
// on(matching:): subscriptions to families of named types, NATS's wildcards over
// dot-separated tokens (QTBUS_SUB_PATTERN) -- named and typed dispatches reaching them,
// subtypes narrowing them, their place after a type's own subscriptions, a queue.
import QTEventBusTestSupport
import Dispatch
import QTBusEngine
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("Pattern subscriptions")
    struct PatternTests {
        @Test func namedAndTypedDispatchesReachPatterns() {
            let bus = QTEventBus()
            let got = Recorder<String>()
            let orders = bus.on(matching: "Order.*").next { got.append("orders:\($0.type)") }
            let everything = bus.on(matching: ">").next { got.append("all:\($0.type)") }
            let own = bus.on(named: "Order.created").next { got.append("own:\($0.type)") }
            #expect(bus.dispatch(named: "Order.created") == 3)
            #expect(got.values == ["own:Order.created", "orders:Order.created", "all:Order.created"])
            // A typed event is its eventName, "QTEventBusTests.PingEvent": two tokens.
            let tests = bus.on(matching: "QTEventBusTests.*").next { got.append("tests:\($0.type)") }
            got.clear()
            #expect(bus.dispatch(PingEvent(n: 1)) == 2)
            #expect(got.values == ["all:QTEventBusTests.PingEvent", "tests:QTEventBusTests.PingEvent"])
            #expect(bus.subscriberCount(named: "Order.created") == 3)
            for token in [orders, everything, own, tests] { token.dispose() }
            #expect(bus.dispatch(named: "Order.created") == 0)
        }

        @Test func subtypesAndQueuesApply() async {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.patterns")
            let got = Recorder<String>()
            let token = bus.on(matching: "Order.>").ofSubType("eu").atQueue(queue).next {
                got.append("\($0.type)/\($0.subType ?? "")")
            }
            bus.dispatch(named: "Order.created", subType: "eu")
            bus.dispatch(named: "Order.created", subType: "us")
            bus.dispatch(named: "Order.created.late", subType: "eu")
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            #expect(got.values == ["Order.created/eu", "Order.created.late/eu"])
            token.dispose()
        }
    }
}
