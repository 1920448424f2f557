// SPDX-License-Identifier: MIT
// buffer(_:whenFull:) and waitUntilIdle(timeout:): a queued subscription's bound, with
// C's overflow rules for one subscription (which deliveries the handler sees, in what
// order; BLOCK holding the dispatcher until room or its timeout; a DROP trace record
// per drop; a dropped request delivery completing), and waiting for a bus's queued
// work, plain atQueue hops included.
import QTEventBusTestSupport
import Dispatch
import Glibc
import QTBusEngine
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("Buffered subscriptions")
    struct BufferTests {
        /// A serial queue whose first item waits at a gate until `open`: deliveries
        /// wait behind it.
        final class HeldQueue: @unchecked Sendable {
            let queue = DispatchQueue(label: "test.buffer")
            private let gate = DispatchSemaphore(value: 0)
            private let entered = DispatchSemaphore(value: 0)
            init() {
                queue.async { [gate, entered] in
                    entered.signal()
                    gate.wait()
                }
                entered.wait()
            }
            func open() { gate.signal() }
        }

        func values(
            _ bus: QTEventBus, _ whenFull: QTOverflow, capacity: Int = 2,
            send: (QTEventBus) -> Void
        ) async -> [Int] {
            let held = HeldQueue()
            let got = Recorder<Int>()
            let token = bus.on(PingEvent.self).atQueue(held.queue).buffer(capacity, whenFull: whenFull)
                .next { got.append($0.n) }
            send(bus)
            held.open()
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            token.dispose()
            return got.values
        }

        @Test func dropNewestKeepsTheFirst() async {
            let got = await values(QTEventBus(), .dropNewest) { bus in
                for n in 0..<6 { bus.dispatch(PingEvent(n: n)) }
            }
            #expect(got == [0, 1])
        }

        @Test func dropOldestKeepsTheLast() async {
            let got = await values(QTEventBus(), .dropOldest, capacity: 3) { bus in
                for n in 0..<10 { bus.dispatch(PingEvent(n: n)) }
            }
            #expect(got == [7, 8, 9])
        }

        /// C's bounded queue once let a delivery its thread had taken to run next escape
        /// the count (docs/perf-notes.md, "A limit counts what waited before it"); the
        /// buffer has no such stage: whatever two producers send, no more than the
        /// capacity ever waits, so no more is delivered.
        @Test(arguments: [QTOverflow.dropOldest, .dropNewest])
        func twoProducersNeverPassTheCapacity(_ whenFull: QTOverflow) async {
            let got = await values(QTEventBus(), whenFull, capacity: 5) { bus in
                DispatchQueue.concurrentPerform(iterations: 2) { producer in
                    for n in 0..<1000 { bus.dispatch(PingEvent(n: producer * 1000 + n)) }
                }
            }
            #expect(got.count == 5)
        }

        @Test func latestReplacesPerSubtypeInPlace() async {
            let bus = QTEventBus()
            let held = HeldQueue()
            let got = Recorder<String>()
            let token = bus.on(LoginEvent.self).atQueue(held.queue).buffer(10, whenFull: .latest)
                .next { got.append($0.userId) }
            for user in ["alice", "bob", "alice", "carol", "bob", "alice"] { bus.dispatch(LoginEvent(userId: user)) }
            held.open()
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            // alice's place is the first, bob's the second: each holds its newest.
            #expect(got.values == ["alice", "bob", "carol"])
            token.dispose()
        }

        @Test func blockWaitsForRoomThenTimesOut() async {
            let bus = QTEventBus()
            let held = HeldQueue()
            let got = Recorder<Int>()
            let token = bus.on(PingEvent.self).atQueue(held.queue).buffer(
                1, whenFull: .block(timeout: .milliseconds(30))
            )
            .next { got.append($0.n) }
            bus.dispatch(PingEvent(n: 0))
            let start = ContinuousClock.now
            bus.dispatch(PingEvent(n: 1))  // no room: waits 30 ms, then drops
            #expect(ContinuousClock.now - start >= .milliseconds(29))
            held.open()
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            #expect(got.values == [0])
            token.dispose()
        }

        @Test func blockWithoutTimeoutLetsEveryDeliveryThroughInOrder() async {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.block")
            let got = Recorder<Int>()
            let token = bus.on(PingEvent.self).atQueue(queue).buffer(2, whenFull: .block(timeout: nil))
                .next { event in
                    usleep(200)
                    got.append(event.n)
                }
            onThreads(4) { t in for n in 0..<50 { bus.dispatch(PingEvent(n: t * 1000 + n)) } }
            #expect(await bus.waitUntilIdle(timeout: .seconds(30)))
            #expect(got.count == 200)
            for t in 0..<4 {
                let mine = got.values.filter { $0 / 1000 == t }
                #expect(mine == Array(t * 1000..<t * 1000 + 50), "each dispatcher's deliveries in its order")
            }
            token.dispose()
        }

        @Test func blockOnItsOwnQueueDoesNotWait() async {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.own")
            let got = Recorder<Int>()
            let token = bus.on(PingEvent.self).atQueue(queue).buffer(1, whenFull: .block(timeout: nil))
                .next { got.append($0.n) }
            queue.async { for n in 0..<5 { bus.dispatch(PingEvent(n: n)) } }
            flush(queue)  // the item above is the test's, not the bus's: wait for it here
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            #expect(got.values == [0, 1, 2, 3, 4])
            token.dispose()
        }

        @Test func eachDropIsTraced() async throws {
            let bus = QTEventBus()
            let records = Recorder<QTTraceRecord>()
            try bus.setTraceHook(.drop) { records.append($0) }
            let got = await values(bus, .dropNewest, capacity: 1) { bus in
                for n in 0..<4 { bus.dispatch(PingEvent(n: n)) }
            }
            #expect(got == [0])
            #expect(records.values.count == 3)
            #expect(records.values.allSatisfy { $0.kind == .drop && $0.function == "QTBUS_OVERFLOW_DROP_NEWEST" })
            bus.removeTraceHook()
        }

        @Test func aDroppedRequestDeliveryCompletes() async {
            let bus = QTEventBus()
            let held = HeldQueue()
            let token = bus.on(PingEvent.self).atQueue(held.queue).buffer(1, whenFull: .dropNewest).next { _ in }
            let completed = Counter()
            bus.dispatch(PingEvent(n: 0))
            bus.request(PingEvent(n: 1), onReply: nil, completion: { completed.increment() })
            #expect(completed.value == 1, "dropped: its part is done at once")
            held.open()
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            token.dispose()
        }

        @Test func waitUntilIdleCountsPlainHopsAndTimesOut() async {
            let bus = QTEventBus()
            let held = HeldQueue()
            let got = Counter()
            let token = bus.on(PingEvent.self).atQueue(held.queue).next { _ in got.increment() }
            for n in 0..<10 { bus.dispatch(PingEvent(n: n)) }
            #expect(await bus.waitUntilIdle(timeout: .milliseconds(20)) == false)
            held.open()
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            #expect(got.value == 10)
            token.dispose()
        }
    }
}
