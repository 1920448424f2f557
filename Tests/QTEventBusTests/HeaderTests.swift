// SPDX-License-Identifier: MIT
// Event headers from Swift (qtbus.h, "Event headers"). What a user relies on: a named
// dispatch with headers reaching a C-style subscriber's event and the Swift handler's
// `QTEventBus.currentHeaders`; a dispatch made in a handler (typed or named) inheriting
// `traceparent`, `tracestate` and `baggage` and nothing else; no headers outside a
// handler, nor in the handler of an event dispatched without any outside one; the
// typed, JSON and request forms carrying them the same way (typed value, subtype and
// bytes intact); an `atQueue` handler seeing its event's headers on its queue and its
// dispatches inheriting them, and one whose event has none seeing none.
import Dispatch
import QTEventBusTestSupport
import QTEventBus
import Testing

private let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

private struct Shipped: QTEvent {
    static var eventName: String { "HeaderTests.Shipped" }
}

private struct Order: QTBytesEvent, Equatable {
    static var eventName: String { "HeaderTests.Order" }
    let id: String
    var eventSubType: String? { id }
    var eventBytes: [UInt8] { Array(id.utf8) }
    init(id: String) { self.id = id }
    init?(eventBytes: UnsafeRawBufferPointer, subType: String?) { id = String(decoding: eventBytes, as: UTF8.self) }
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

    @Test func typedDispatchCarriesHeaders() {
        let bus = QTEventBus()
        let typed = Recorder<Order>()
        let seen = Recorder<[String: String]>()
        let named = Recorder<[UInt8]>()
        let t1 = bus.on(Order.self).ofSubType("o1").next { order in
            typed.append(order)
            seen.append(QTEventBus.currentHeaders)
        }
        let t2 = bus.on(named: "HeaderTests.Order").next { named.append($0.bytes) }
        defer {
            t1.dispose()
            t2.dispose()
        }
        #expect(bus.dispatch(Order(id: "o1"), headers: ["traceparent": tp, "x-n": ""]) == 2)
        #expect(typed.values == [Order(id: "o1")])
        #expect(seen.values == [["traceparent": tp, "x-n": ""]])
        #expect(named.values == [Array("o1".utf8)])
        // Sticky: the replay carries them too.
        bus.dispatch(Order(id: "o1"), sticky: true, headers: ["x-sticky": "1"])
        let replayed = Recorder<[String: String]>()
        let t3 = bus.on(Order.self).replay().next { _ in replayed.append(QTEventBus.currentHeaders) }
        t3.dispose()
        #expect(replayed.values == [["x-sticky": "1"]])
        // The form without headers is untouched.
        bus.dispatch(Order(id: "o1"))
        #expect(seen.values.last == [:])
    }

    @Test func jsonDispatchCarriesHeaders() throws {
        let bus = QTEventBus()
        let seen = Recorder<[String: String]>()
        let token = bus.on(named: QTEventBus.jsonTypeName).ofSubType("HeaderTests.J").next { _ in
            seen.append(QTEventBus.currentHeaders)
        }
        defer { token.dispose() }
        #expect(try bus.dispatchJSON(name: "HeaderTests.J", json: #"{"a":1}"#, headers: ["baggage": "k=v"]) == 1)
        #expect(seen.values == [["baggage": "k=v"]])
        #expect(throws: QTBusError.self) { try bus.dispatchJSON(name: "HeaderTests.J", json: "{", headers: [:]) }
        #expect(seen.count == 1)
    }

    @Test func requestsCarryHeaders() async throws {
        let bus = QTEventBus()
        let seen = Recorder<[String: String]>()
        let t1 = bus.on(Order.self).nextRequest { order, request in
            seen.append(QTEventBus.currentHeaders)
            request.reply(order.id)
        }
        let t2 = bus.on(named: "HeaderTests.Ask").nextRequest { _, request in
            seen.append(QTEventBus.currentHeaders)
            request.reply("named")
        }
        defer {
            t1.dispose()
            t2.dispose()
        }
        let replies = Recorder<String>()
        #expect(bus.request(Order(id: "r1"), headers: ["x-r": "1"], onReply: { replies.append($0.string) }) == 1)
        #expect(
            bus.request(named: "HeaderTests.Ask", headers: ["x-r": "2"], onReply: { replies.append($0.string) }) == 1)
        #expect(replies.values == ["r1", "named"])
        #expect(try await bus.request(Order(id: "r3"), headers: ["x-r": "3"]).map(\.string) == ["r3"])
        #expect(try await bus.request(Order(id: "r4"), replyAs: String.self, headers: ["x-r": "4"]) == ["r4"])
        #expect(try await bus.request(named: "HeaderTests.Ask", headers: ["x-r": "5"]).map(\.string) == ["named"])
        #expect(seen.values == (1...5).map { ["x-r": "\($0)"] })
        // Replies carry none; the plain forms give none.
        bus.request(Order(id: "r6"), onReply: nil)
        #expect(seen.values.last == [:])
    }

    @Test func atQueueHandlersSeeTheirEventsHeaders() async {
        let bus = QTEventBus()
        let queue = DispatchQueue(label: "HeaderTests.atQueue")
        let seen = Recorder<[String: String]>()
        let inherited = Recorder<[String: String]>()
        let t1 = bus.on(named: "HeaderTests.Queued").atQueue(queue).next { _ in
            seen.append(QTEventBus.currentHeaders)
            bus.dispatch(Shipped())
        }
        let t2 = bus.on(Shipped.self).next { _ in inherited.append(QTEventBus.currentHeaders) }
        defer {
            t1.dispose()
            t2.dispose()
        }
        bus.dispatch(named: "HeaderTests.Queued", headers: ["traceparent": tp, "x-local": "q"])
        bus.dispatch(named: "HeaderTests.Queued")
        #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
        #expect(seen.values == [["traceparent": tp, "x-local": "q"], [:]])
        #expect(inherited.values == [["traceparent": tp], [:]])
        // The queue's thread keeps no context after the hop.
        #expect(queue.sync { QTEventBus.currentHeaders }.isEmpty)
    }

    @Test func bufferedAtQueueHandlersSeeTheirEventsHeaders() async {
        let bus = QTEventBus()
        let queue = DispatchQueue(label: "HeaderTests.buffered")
        let seen = Recorder<[String: String]>()
        let token = bus.on(named: "HeaderTests.Buffered").atQueue(queue).buffer(4, whenFull: .dropOldest).next { _ in
            seen.append(QTEventBus.currentHeaders)
        }
        defer { token.dispose() }
        bus.dispatch(named: "HeaderTests.Buffered", headers: ["x-b": "1"])
        #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
        #expect(seen.values == [["x-b": "1"]])
    }
}
