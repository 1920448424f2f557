// SPDX-License-Identifier: MIT
// events(of:) as an AsyncStream: ordered delivery, and the subscription ends (its
// closure released) when the consumer stops.
import QTEventBusTestSupport
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("AsyncStream")
    struct AsyncStreamTests {

        @Test func forAwaitReceivesEventsInOrder() async {
            let bus = QTEventBus()
            let producer = Task.detached {
                #expect(waitUntil { bus.subscriberCount(of: PingEvent.self) == 1 })
                for n in 0..<5 { bus.dispatch(PingEvent(n: n)) }
            }
            var got = [Int]()
            for await event in bus.events(of: PingEvent.self) {
                got.append(event.n)
                if got.count == 5 { break }
            }
            await producer.value
            #expect(got == [0, 1, 2, 3, 4])
            #expect(
                waitUntil { bus.subscriberCount(of: PingEvent.self) == 0 },
                "breaking out of the loop ended the subscription")
        }

        @Test func streamKeptAfterTheLoopEndsWithTheStream() async {
            let bus = QTEventBus()
            do {
                let stream = bus.events(of: PingEvent.self)
                bus.dispatch(PingEvent(n: 1))
                for await _ in stream { break }
                #expect(bus.subscriberCount(of: PingEvent.self) == 1, "the stream value still exists")
            }
            #expect(waitUntil { bus.subscriberCount(of: PingEvent.self) == 0 })
        }

        @Test func bufferingPoliciesAreAsyncStreams() async {
            let bus = QTEventBus()
            let newest = bus.events(of: PingEvent.self, bufferingPolicy: .bufferingNewest(2))
            let oldest = bus.events(of: PingEvent.self, bufferingPolicy: .bufferingOldest(2))
            let all = bus.events(of: PingEvent.self)  // the default keeps every event
            for n in 0..<5 { bus.dispatch(PingEvent(n: n)) }
            func take(_ stream: AsyncStream<PingEvent>, _ count: Int) async -> [Int] {
                var got = [Int]()
                for await event in stream {
                    got.append(event.n)
                    if got.count == count { break }
                }
                return got
            }
            #expect(await take(newest, 2) == [3, 4])
            #expect(await take(oldest, 2) == [0, 1])
            #expect(await take(all, 5) == [0, 1, 2, 3, 4])
        }

        @Test func subtypeStream() async {
            let bus = QTEventBus()
            let stream = bus.events(of: LoginEvent.self, subType: "alice")
            bus.dispatch(LoginEvent(userId: "bob"))
            bus.dispatch(LoginEvent(userId: "alice"))
            var iterator = stream.makeAsyncIterator()
            let first = await iterator.next()
            #expect(first?.userId == "alice")
        }

        @Test func cancellingTheConsumerEndsTheSubscription() async {
            let bus = QTEventBus()
            let started = Counter()
            let consumer = Task {
                var n = 0
                started.increment()
                for await _ in bus.events(of: PingEvent.self) { n += 1 }
                return n
            }
            #expect(waitUntil { started.value == 1 && bus.subscriberCount(of: PingEvent.self) == 1 })
            bus.dispatch(PingEvent(n: 1))
            consumer.cancel()
            _ = await consumer.value
            #expect(waitUntil { bus.subscriberCount(of: PingEvent.self) == 0 })
        }

        @Test func droppingTheStreamEndsTheSubscriptionAndReleasesItsBuffer() {
            let bus = QTEventBus()
            weak var watched: Token?
            struct Carrier: QTEvent { let token: Token }
            do {
                let stream = bus.events(of: Carrier.self)
                do {
                    let t = Token()
                    watched = t
                    bus.dispatch(Carrier(token: t))  // buffered in the stream
                }
                #expect(watched != nil)
                _ = stream
            }
            #expect(waitUntil { bus.subscriberCount(of: Carrier.self) == 0 })
            #expect(waitUntil { watched == nil }, "the buffered event was released with the stream")
        }

        @Test func onceStreamFinishesAfterItsEvent() async {
            let bus = QTEventBus()
            let stream = bus.on(PingEvent.self).once().events()
            bus.dispatch(PingEvent(n: 1))
            bus.dispatch(PingEvent(n: 2))
            var got = [Int]()
            for await event in stream { got.append(event.n) }
            #expect(got == [1])
        }

    }
}
