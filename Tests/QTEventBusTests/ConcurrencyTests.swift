// SPDX-License-Identifier: MIT
// QTEventBus's collection tests, at the bus level: concurrent writers (2 threads x
// 10,000 subscriptions), writers racing dispatchers, and removal while delivering.
import QTEventBusTestSupport
import Dispatch
import QTEventBus
import Synchronization
import Testing

/// Counts its deinits, to check every closure is released exactly once.
final class Tracked: Sendable {
    let deinits: Counter
    init(_ deinits: Counter) { self.deinits = deinits }
    deinit { deinits.increment() }
}

extension QTBusTests {
    @Suite("Concurrency")
    struct ConcurrencyTests {

        @Test func twoWriterThreadsTenThousandEach() {
            let bus = QTEventBus()
            let perThread = 10_000
            let calls = Counter(), deinits = Counter()
            let tokens = Recorder<[QTEventToken]>()
            onThreads(2) { thread in
                var mine = [QTEventToken]()
                mine.reserveCapacity(perThread)
                for i in 0..<perThread {
                    let tracked = Tracked(deinits)
                    let maker = bus.on(LoginEvent.self)
                    let token = (i % 2 == 0 ? maker : maker.ofSubType("t\(thread)"))
                        .next { _ in
                            _ = tracked
                            calls.increment()
                        }
                    mine.append(token)
                }
                tokens.append(mine)
            }
            #expect(bus.subscriberCount(of: LoginEvent.self) == 2 * perThread)
            #expect(bus.subscriberCount(of: LoginEvent.self, subType: "t0") == perThread + perThread / 2)
            #expect(bus.dispatch(LoginEvent(userId: "t1")) == perThread + perThread / 2)
            #expect(calls.value == perThread + perThread / 2)

            let all = tokens.values.flatMap { $0 }
            onThreads(2) { thread in
                for i in stride(from: thread, to: all.count, by: 2) { all[i].dispose() }
            }
            #expect(bus.subscriberCount(of: LoginEvent.self) == 0)
            #expect(
                waitUntil { deinits.value == 2 * perThread },
                "every closure released exactly once: \(deinits.value)")
        }

        @Test func writersRaceDispatchers() {
            let bus = QTEventBus()
            let stable = Counter(), churn = Counter(), deinits = Counter()
            let stableToken = bus.on(PingEvent.self).next { _ in stable.increment() }
            let dispatches = Counter()
            let done = Counter()
            onThreads(4) { thread in
                if thread < 2 {
                    // writers: subscribe and dispose in a loop, some from inside handlers
                    for i in 0..<2_000 {
                        let tracked = Tracked(deinits)
                        let slot = LockedValue<QTEventToken?>()
                        let token = bus.on(PingEvent.self).priority(i % 3).next { _ in
                            _ = tracked
                            churn.increment()
                            if i % 5 == 0 { slot.value?.dispose() }
                        }
                        slot.value = token
                        if i % 7 == 0 {
                            bus.dispatch(PingEvent(n: -1))
                            dispatches.increment()
                        }
                        token.dispose()
                    }
                    done.increment()
                } else {
                    // dispatchers
                    while done.value == 0 {
                        bus.dispatch(PingEvent(n: thread))
                        dispatches.increment()
                    }
                }
            }
            #expect(stable.value == dispatches.value, "the stable subscription saw every dispatch once")
            #expect(bus.subscriberCount(of: PingEvent.self) == 1)
            #expect(waitUntil { deinits.value == 4_000 }, "\(deinits.value)")
            stableToken.dispose()
        }

        @Test func disposingOtherSubscriptionsDuringDelivery() {
            let bus = QTEventBus()
            let calls = Recorder<Int>()
            let tokens = Recorder<QTEventToken>()
            for i in 0..<10 {
                let token = bus.on(PingEvent.self).next { _ in
                    calls.append(i)
                    if i == 0 { tokens.values.dropFirst().forEach { $0.dispose() } }
                }
                tokens.append(token)
            }
            bus.dispatch(PingEvent(n: 0))
            #expect(calls.values == [0], "subscriptions disposed by an earlier handler are not called")
            #expect(bus.subscriberCount(of: PingEvent.self) == 1)
            tokens.values.forEach { $0.dispose() }
        }

        @Test func manyThreadsDispatchingEachDeliveryOnce() {
            let bus = QTEventBus()
            let calls = Counter()
            var tokens = [QTEventToken]()
            for _ in 0..<10 { tokens.append(bus.on(LoginEvent.self).ofSubType("a").next { _ in calls.increment() }) }
            onThreads(4) { _ in
                for _ in 0..<5_000 { bus.dispatch(LoginEvent(userId: "a")) }
            }
            #expect(calls.value == 4 * 5_000 * 10)
            tokens.forEach { $0.dispose() }
        }
    }
}
