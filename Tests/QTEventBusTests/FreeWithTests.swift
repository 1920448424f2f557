// SPDX-License-Identifier: MIT
// freeWith(object) on Linux (QTEventBus's attach tests): once the object is gone the
// handler never runs again, the subscription is not counted and no dispatch (C or
// Swift) reports it as reached, and its closure is released no later than the next
// dispatch of the type from either language; freeWith(nil) attaches to nothing.
import QTEventBusTestSupport
import QTEventBusCTestSupport
import Dispatch
import QTEventBus
import Synchronization
import Testing

extension QTBusTests {
    @Suite("freeWith")
    struct FreeWithTests {

        @Test func handlerStopsAndClosureIsReleasedAtTheNextDispatch() {
            let bus = QTEventBus()
            let calls = Counter()
            var owner: Owner? = Owner()
            weak let weakOwner = owner
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                bus.on(PingEvent.self).freeWith(owner!).next { _ in
                    _ = captured
                    calls.increment()
                }
            }
            bus.dispatch(PingEvent(n: 1))
            #expect(calls.value == 1)
            owner = nil
            #expect(weakOwner == nil, "the subscription holds its object weakly")
            #expect(watched != nil, "nothing noticed yet: Linux has no associated objects")
            bus.dispatch(PingEvent(n: 2))
            #expect(calls.value == 1, "never called after the object is gone")
            #expect(watched == nil, "closure released by the end of the next dispatch")
            #expect(bus.subscriberCount(of: PingEvent.self) == 0)
        }

        @Test func subtypeSubscriptionIsReleasedByADispatchOfAnotherSubtype() {
            let bus = QTEventBus()
            let calls = Counter()
            var owner: Owner? = Owner()
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                bus.on(LoginEvent.self).ofSubType("alice").freeWith(owner!).next { _ in
                    _ = captured
                    calls.increment()
                }
            }
            owner = nil
            bus.dispatch(LoginEvent(userId: "bob"))  // does not reach the "alice" subscription
            #expect(watched == nil, "swept by the next dispatch of the type, whatever its subtype")
            bus.dispatch(LoginEvent(userId: "alice"))
            #expect(calls.value == 0)
            #expect(bus.subscriberCount(of: LoginEvent.self) == 0)
        }

        @Test func namedSubscriptionsAreSweptByNamedDispatches() {
            let bus = QTEventBus()
            var owner: Owner? = Owner()
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                bus.on(named: "FreeWithNamed").ofSubType("a").freeWith(owner!).next { _ in _ = captured }
            }
            owner = nil
            bus.dispatch(named: "FreeWithNamed", subType: "b")
            #expect(watched == nil)
        }

        @Test func patternSubscriptionsAreNotCountedOnceTheOwnerIsGone() {
            let bus = QTEventBus()
            var owner: Owner? = Owner()
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                bus.on(matching: "FreeWith.>").ofSubType("a").freeWith(owner!).next { _ in _ = captured }
            }
            owner = nil
            #expect(bus.subscriberCount(named: "FreeWith.x", subType: "a") == 0, "a count asks too")
            bus.dispatch(named: "Other", subType: "a")  // matches nothing: not asked
            #expect(watched == nil, "released once the count had disposed it")
        }

        @Test func patternSubscriptionsAreSweptByADispatchOfAMatchingType() {
            let bus = QTEventBus()
            var owner: Owner? = Owner()
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                bus.on(matching: "FreeWith.>").ofSubType("a").freeWith(owner!).next { _ in _ = captured }
            }
            owner = nil
            bus.dispatch(named: "Other", subType: "a")  // matches nothing: not asked
            #expect(watched != nil)
            bus.dispatch(named: "FreeWith.x", subType: "b")  // matches, does not reach it
            #expect(watched == nil, "swept by the next dispatch of a type it matches, whatever its subtype")
        }

        @Test func objectThatLivesKeepsTheSubscription() {
            let bus = QTEventBus()
            let owner = Owner()
            let calls = Counter()
            let token = bus.on(LoginEvent.self).ofSubType("alice").freeWith(owner).next { _ in calls.increment() }
            for _ in 0..<3 {
                bus.dispatch(LoginEvent(userId: "alice"))
                bus.dispatch(LoginEvent(userId: "bob"))
            }
            #expect(calls.value == 3)
            #expect(token.isActive)
            withExtendedLifetime(owner) {}
            token.dispose()
        }

        @Test func queuedHopChecksTheObjectWhenItRuns() {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.freewith")
            let gate = DispatchSemaphore(value: 0)
            queue.async { gate.wait() }
            let calls = Counter()
            var owner: Owner? = Owner()
            let token = bus.on(PingEvent.self).atQueue(queue).freeWith(owner!).next { _ in calls.increment() }
            bus.dispatch(PingEvent(n: 1))  // queued while the object lives
            owner = nil
            gate.signal()
            flush(queue)
            #expect(calls.value == 0, "the object died before the hop ran")
            #expect(!token.isActive)
        }

        @Test func freeWithNilAttachesToNothing() {
            // QTEventBus's nil-attach test: no crash, and the subscription simply lives.
            let bus = QTEventBus()
            let calls = Counter()
            let token = bus.on(PingEvent.self).freeWith(nil).next { _ in calls.increment() }
            bus.dispatch(PingEvent(n: 1))
            bus.dispatch(PingEvent(n: 2))
            #expect(calls.value == 2)
            #expect(token.isActive)
            token.dispose()
        }

        @Test func manyOwnersOnlyTheDeadOnesEnd() {
            let bus = QTEventBus()
            var owners: [Owner?] = (0..<20).map { _ in Owner() }
            let calls = Recorder<Int>()
            for i in 0..<20 {
                bus.on(LoginEvent.self).ofSubType("u\(i)").freeWith(owners[i]!).next { _ in calls.append(i) }
            }
            for i in stride(from: 0, to: 20, by: 2) { owners[i] = nil }
            bus.dispatch(LoginEvent(userId: "nobody"))
            #expect(bus.subscriberCount(of: LoginEvent.self) == 10)
            for i in 0..<20 { bus.dispatch(LoginEvent(userId: "u\(i)")) }
            #expect(calls.values == Array(stride(from: 1, to: 20, by: 2)))
            owners.removeAll()
            bus.dispatch(LoginEvent(userId: "nobody"))
            #expect(bus.subscriberCount(of: LoginEvent.self) == 0)
        }

        @Test func aGoneOwnerIsNotCountedNorReported() {
            let bus = QTEventBus()
            var owner: Owner? = Owner()
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                bus.on(PingEvent.self).freeWith(owner!).next { _ in _ = captured }
            }
            #expect(bus.subscriberCount(of: PingEvent.self) == 1)
            owner = nil
            #expect(bus.subscriberCount(of: PingEvent.self) == 0, "not counted once the object is gone")
            #expect(watched == nil, "the count disposed it: released before it returned")
            #expect(bus.dispatch(PingEvent(n: 1)) == 0)

            var owner2: Owner? = Owner()
            bus.on(PingEvent.self).freeWith(owner2!).next { _ in }
            owner2 = nil
            #expect(bus.dispatch(PingEvent(n: 2)) == 0, "not reported as reached")
        }

        @Test func onlyCDispatchingReleasesTheClosure() {
            // C code dispatches the type; Swift never does.
            let bus = QTEventBus.shared
            var owner: Owner? = Owner()
            weak var watchedWhole: Token?
            weak var watchedSubtype: Token?
            let calls = Counter()
            do {
                let whole = Token(), subtype = Token()
                watchedWhole = whole
                watchedSubtype = subtype
                bus.on(named: "FreeWithFromC").freeWith(owner!).next { _ in
                    _ = whole
                    calls.increment()
                }
                bus.on(named: "FreeWithFromC").ofSubType("alice").freeWith(owner!).next { _ in
                    _ = subtype
                    calls.increment()
                }
            }
            #expect(cpeer_dispatch("FreeWithFromC", "alice", "hi") == 2)
            owner = nil
            #expect(watchedWhole != nil && watchedSubtype != nil, "nothing noticed yet")
            #expect(cpeer_dispatch("FreeWithFromC", "bob", "hi") == 0, "C's dispatch reports neither as reached")
            #expect(watchedWhole == nil && watchedSubtype == nil, "released by the end of C's dispatch")
            #expect(calls.value == 2)
            #expect(bus.subscriberCount(named: "FreeWithFromC") == 0)
        }

        @Test func anOwnerWhoseDeinitCallsTheBusDiesDuringAnyCheck() {
            // The owner's last reference goes on other threads while the type is counted
            // and dispatched: its deinit (disposing its own bag, counting) may then run
            // from the engine's check, which must not hold the engine's lock then.
            final class BagOwner {
                let bag = QTDisposeBag()
                let bus: QTEventBus
                init(bus: QTEventBus) { self.bus = bus }
                deinit { _ = bus.subscriberCount(of: PingEvent.self) }
            }
            let bus = QTEventBus()
            let made = Counter(), released = Counter(), stop = Atomic<Bool>(false)
            final class Tracked: Sendable {
                let released: Counter
                init(_ released: Counter) { self.released = released }
                deinit { released.increment() }
            }
            onThreads(4) { i in
                if i < 2 {
                    for _ in 0..<2_000 {
                        let owner = BagOwner(bus: bus)
                        let tracked = Tracked(released)
                        made.increment()
                        bus.on(PingEvent.self).freeWith(owner).next { _ in _ = tracked }
                        bus.on(LoginEvent.self).disposed(by: owner.bag).next { _ in }
                    }
                    stop.store(true, ordering: .relaxed)
                } else {
                    while !stop.load(ordering: .relaxed) {
                        if i == 2 { bus.dispatch(PingEvent(n: 0)) } else { _ = bus.subscriberCount(of: PingEvent.self) }
                    }
                }
            }
            #expect(bus.subscriberCount(of: PingEvent.self) == 0)
            #expect(bus.subscriberCount(of: LoginEvent.self) == 0)
            #expect(released.value == made.value, "every closure released")
        }
    }
}
