// SPDX-License-Identifier: MIT
// Event headers from Swift (qtbus.h, "Event headers"). What a user relies on: a named
// dispatch with headers reaching a C-style subscriber's event and the Swift handler's
// `QTEventBus.currentHeaders`; a dispatch made in a handler (typed or named) inheriting
// `traceparent`, `tracestate` and `baggage` and nothing else; no headers outside a
// handler, nor in the handler of an event dispatched without any outside one.
import QTEventBusTestSupport
import QTEventBus
import Testing

private let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

private struct Shipped: QTEvent {
    static var eventName: String { "HeaderTests.Shipped" }
}

@Suite struct HeaderTests {
    @Test func namedDispatchCarriesHeaders() {
        let bus = QTEventBus()
        let seen = Recorder<[String: String]>()
        let token = bus.on(named: "HeaderTests.Order").next { _ in seen.append(QTEventBus.currentHeaders) }
        defer { token.dispose() }
        #expect(bus.dispatch(named: "HeaderTests.Order", headers: ["traceparent": tp, "x-note": "n"]) == 1)
        #expect(seen.values == [["traceparent": tp, "x-note": "n"]])
        #expect(QTEventBus.currentHeaders.isEmpty)
        #expect(bus.dispatch(named: "HeaderTests.Order") == 1)
        #expect(seen.values.last == [:])
    }

    @Test func handlersInheritTraceContext() {
        let bus = QTEventBus()
        let inner = Recorder<[String: String]>()
        let outer = bus.on(named: "HeaderTests.Outer").next { _ in bus.dispatch(Shipped()) }
        let shipped = bus.on(Shipped.self).next { _ in inner.append(QTEventBus.currentHeaders) }
        defer {
            outer.dispose()
            shipped.dispose()
        }
        bus.dispatch(named: "HeaderTests.Outer", headers: ["traceparent": tp, "baggage": "k=v", "x-local": "no"])
        #expect(inner.values == [["traceparent": tp, "baggage": "k=v"]])
        bus.dispatch(Shipped())
        #expect(inner.values.last == [:])
    }
}
