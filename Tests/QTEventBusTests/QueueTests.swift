// SPDX-License-Identifier: MIT
// atQueue, dispatchOnBusQueue, sticky events and replay, and lifetime rule 2 for hops:
// a delivery still queued when its token is disposed is dropped.  (The main queue's
// tests, which need the main thread, are in MainThreadTests.swift.)
import QTEventBusTestSupport
import Dispatch
import QTBusEngine
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("Queues")
    struct QueueTests {

        @Test func atQueueRunsOnThatQueueInDispatchOrder() {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.serial")
            let key = DispatchSpecificKey<Int>()
            queue.setSpecific(key: key, value: 42)
            let got = Recorder<Int>(), onQueue = Counter()
            let token = bus.on(PingEvent.self).atQueue(queue).next { event in
                if DispatchQueue.getSpecific(key: key) == 42 { onQueue.increment() }
                got.append(event.n)
            }
            for n in 0..<100 { #expect(bus.dispatch(PingEvent(n: n)) == 1) }
            flush(queue)
            #expect(got.values == Array(0..<100))
            #expect(onQueue.value == 100)
            token.dispose()
        }

        @Test func disposeDropsDeliveriesStillQueued() {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.blocked")
            let gate = DispatchSemaphore(value: 0)
            queue.async { gate.wait() }  // hold the queue
            let got = Counter()
            let token = bus.on(PingEvent.self).atQueue(queue).next { _ in got.increment() }
            for n in 0..<10 { bus.dispatch(PingEvent(n: n)) }
            token.dispose()
            gate.signal()
            flush(queue)
            #expect(got.value == 0, "lifetime rule 2: queued hops are dropped once dispose returned")
        }

        @Test func queuedHopKeepsTheClosureUntilItRuns() {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.hold")
            let gate = DispatchSemaphore(value: 0)
            queue.async { gate.wait() }
            weak var watched: Token?
            let got = Counter()
            let token: QTEventToken
            do {
                let captured = Token()
                watched = captured
                token = bus.on(PingEvent.self).atQueue(queue).once().next { _ in
                    _ = captured
                    got.increment()
                }
            }
            bus.dispatch(PingEvent(n: 1))
            #expect(!token.isActive, "ONCE fired (its hop is queued)")
            #expect(watched != nil, "the queued hop still holds the closure")
            gate.signal()
            flush(queue)
            #expect(got.value == 1, "a fired ONCE hop still runs")
            #expect(waitUntil(2) { watched == nil }, "released after the hop ran")
        }

        @Test func dispatchOnBusQueueKeepsOrderAndReturnsAtOnce() {
            let bus = QTEventBus()
            let got = Recorder<Int>()
            let token = bus.on(PingEvent.self).next { got.append($0.n) }
            for n in 0..<200 { #expect(bus.dispatchOnBusQueue(PingEvent(n: n)) == 0) }
            #expect(waitUntil { got.count == 200 })
            #expect(got.values == Array(0..<200), "posts are delivered in the order they were made")
            token.dispose()
        }

        @Test func stickyEventsReplayThenLiveWithoutGap() {
            let bus = QTEventBus()
            bus.dispatch(LoginEvent(userId: "alice"), sticky: true)
            bus.dispatch(LoginEvent(userId: "bob"), sticky: true)
            bus.dispatch(LoginEvent(userId: "alice2"))  // not sticky: not kept
            let all = Recorder<String>(), bob = Recorder<String>(), plain = Counter()
            let t1 = bus.on(LoginEvent.self).replay().next { all.append($0.userId) }
            let t2 = bus.on(LoginEvent.self).ofSubType("bob").replay().next { bob.append($0.userId) }
            let t3 = bus.on(LoginEvent.self).next { _ in plain.increment() }
            #expect(all.values == ["alice", "bob"], "kept events, oldest first, before next returned")
            #expect(bob.values == ["bob"])
            #expect(plain.value == 0, "no replay without replay()")
            bus.dispatch(LoginEvent(userId: "carol"))
            #expect(all.values == ["alice", "bob", "carol"])
            #expect(bus.removeSticky(LoginEvent.self, subType: "bob") == 1)
            #expect(bus.removeSticky(LoginEvent.self) == 1)
            let late = Recorder<String>()
            let t4 = bus.on(LoginEvent.self).replay().next { late.append($0.userId) }
            #expect(late.values == [])
            [t1, t2, t3, t4].forEach { $0.dispose() }
        }

        @Test func stickyValueOutlivesTheDispatchUntilCleared() {
            let bus = QTEventBus()
            weak var watched: Token?
            struct Holder: QTEvent { let token: Token }
            do {
                let t = Token()
                watched = t
                bus.dispatch(Holder(token: t), sticky: true)
            }
            #expect(watched != nil, "the bus keeps the sticky event's value")
            let got = Counter()
            let sub = bus.on(Holder.self).replay().next { _ in got.increment() }
            #expect(got.value == 1)
            sub.dispose()
            #expect(bus.removeSticky(Holder.self) == 1)
            #expect(waitUntil(2) { watched == nil }, "released once cleared")
        }

        @Test func replayOnAQueue() {
            let bus = QTEventBus()
            bus.dispatch(PingEvent(n: 1), sticky: true)
            let queue = DispatchQueue(label: "test.replay")
            let got = Recorder<Int>()
            let token = bus.on(PingEvent.self).replay().atQueue(queue).next { got.append($0.n) }
            bus.dispatch(PingEvent(n: 2))
            flush(queue)
            #expect(got.values == [1, 2])
            token.dispose()
        }
    }
}
