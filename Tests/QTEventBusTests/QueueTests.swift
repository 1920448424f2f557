// atQueue, the main queue (the one C drains with qtbus_main_drain), dispatchOnBusQueue,
// dispatchOnMain, and lifetime rule 2 for hops: a delivery still queued when its token
// is disposed is dropped.
import QTEventBusTestSupport
import Dispatch
import QTBusEngine
import QTEventBus
import XCTest

final class QueueTests: XCTestCase {

    func testAtQueueRunsOnThatQueueInDispatchOrder() {
        let bus = QTEventBus()
        let queue = DispatchQueue(label: "test.serial")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 42)
        let got = Recorder<Int>(), onQueue = Counter()
        let token = bus.on(PingEvent.self).atQueue(queue).next { event in
            if DispatchQueue.getSpecific(key: key) == 42 { onQueue.increment() }
            got.append(event.n)
        }
        for n in 0..<100 { XCTAssertEqual(bus.dispatch(PingEvent(n: n)), 1) }
        flush(queue)
        XCTAssertEqual(got.values, Array(0..<100))
        XCTAssertEqual(onQueue.value, 100)
        token.dispose()
    }

    func testDisposeDropsDeliveriesStillQueued() {
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
        XCTAssertEqual(got.value, 0, "lifetime rule 2: queued hops are dropped once dispose returned")
    }

    func testQueuedHopKeepsTheClosureUntilItRuns() {
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
            token = bus.on(PingEvent.self).atQueue(queue).once().next { _ in _ = captured; got.increment() }
        }
        bus.dispatch(PingEvent(n: 1))
        XCTAssertFalse(token.isActive, "ONCE fired (its hop is queued)")
        XCTAssertNotNil(watched, "the queued hop still holds the closure")
        gate.signal()
        flush(queue)
        XCTAssertEqual(got.value, 1, "a fired ONCE hop still runs")
        XCTAssertTrue(waitUntil(2) { watched == nil }, "released after the hop ran")
    }

    func testMainQueueIsTheEngineMainQueue() {
        // Swift's DispatchQueue.main hops run when C's pump (qtbus_main_wait/drain) runs.
        let bus = QTEventBus()
        let got = Recorder<Int>(), onMain = Counter()
        let token = bus.on(PingEvent.self).atQueue(.main).next { event in
            if isMainThread() { onMain.increment() }
            got.append(event.n)
        }
        let worker = DispatchQueue(label: "test.worker")
        worker.sync { for n in 0..<5 { bus.dispatch(PingEvent(n: n)) } }
        XCTAssertEqual(got.count, 0, "nothing runs until the main queue is drained")
        XCTAssertTrue(drainMain { got.count == 5 })
        XCTAssertEqual(got.values, [0, 1, 2, 3, 4])
        XCTAssertEqual(onMain.value, 5)
        token.dispose()
    }

    func testNextOnMainIsMainActorIsolated() {
        let bus = QTEventBus()
        let got = Recorder<String>()
        let token = bus.on(LoginEvent.self).nextOnMain { event in
            MainActor.assertIsolated()
            got.append(event.userId)
        }
        DispatchQueue(label: "test.bg").sync { _ = bus.dispatch(LoginEvent(userId: "alice")) }
        XCTAssertTrue(drainMain { got.count == 1 })
        XCTAssertEqual(got.values, ["alice"])
        token.dispose()
    }

    func testDispatchOnBusQueueKeepsOrderAndReturnsAtOnce() {
        let bus = QTEventBus()
        let got = Recorder<Int>()
        let token = bus.on(PingEvent.self).next { got.append($0.n) }
        for n in 0..<200 { XCTAssertEqual(bus.dispatchOnBusQueue(PingEvent(n: n)), 0) }
        XCTAssertTrue(waitUntil { got.count == 200 })
        XCTAssertEqual(got.values, Array(0..<200), "posts are delivered in the order they were made")
        token.dispose()
    }

    func testDispatchOnMainRunsWhenTheMainQueueIsDrained() {
        let bus = QTEventBus()
        let got = Recorder<Int>(), onMain = Counter()
        let token = bus.on(PingEvent.self).next { event in
            if isMainThread() { onMain.increment() }
            got.append(event.n)
        }
        XCTAssertEqual(bus.dispatchOnMain(PingEvent(n: 1)), 0)
        XCTAssertEqual(got.count, 0)
        XCTAssertTrue(drainMain { got.count == 1 })
        XCTAssertEqual(onMain.value, 1)
        token.dispose()
    }

    func testStickyEventsReplayThenLiveWithoutGap() {
        let bus = QTEventBus()
        bus.dispatch(LoginEvent(userId: "alice"), sticky: true)
        bus.dispatch(LoginEvent(userId: "bob"), sticky: true)
        bus.dispatch(LoginEvent(userId: "alice2"))  // not sticky: not kept
        let all = Recorder<String>(), bob = Recorder<String>(), plain = Counter()
        let t1 = bus.on(LoginEvent.self).replay().next { all.append($0.userId) }
        let t2 = bus.on(LoginEvent.self).ofSubType("bob").replay().next { bob.append($0.userId) }
        let t3 = bus.on(LoginEvent.self).next { _ in plain.increment() }
        XCTAssertEqual(all.values, ["alice", "bob"], "kept events, oldest first, before next returned")
        XCTAssertEqual(bob.values, ["bob"])
        XCTAssertEqual(plain.value, 0, "no replay without replay()")
        bus.dispatch(LoginEvent(userId: "carol"))
        XCTAssertEqual(all.values, ["alice", "bob", "carol"])
        XCTAssertEqual(bus.removeSticky(LoginEvent.self, subType: "bob"), 1)
        XCTAssertEqual(bus.removeSticky(LoginEvent.self), 1)
        let late = Recorder<String>()
        let t4 = bus.on(LoginEvent.self).replay().next { late.append($0.userId) }
        XCTAssertEqual(late.values, [])
        [t1, t2, t3, t4].forEach { $0.dispose() }
    }

    func testStickyValueOutlivesTheDispatchUntilCleared() {
        let bus = QTEventBus()
        weak var watched: Token?
        struct Holder: QTEvent { let token: Token }
        do {
            let t = Token()
            watched = t
            bus.dispatch(Holder(token: t), sticky: true)
        }
        XCTAssertNotNil(watched, "the bus keeps the sticky event's value")
        let got = Counter()
        let sub = bus.on(Holder.self).replay().next { _ in got.increment() }
        XCTAssertEqual(got.value, 1)
        sub.dispose()
        XCTAssertEqual(bus.removeSticky(Holder.self), 1)
        XCTAssertTrue(waitUntil(2) { watched == nil }, "released once cleared")
    }

    func testReplayOnAQueue() {
        let bus = QTEventBus()
        bus.dispatch(PingEvent(n: 1), sticky: true)
        let queue = DispatchQueue(label: "test.replay")
        let got = Recorder<Int>()
        let token = bus.on(PingEvent.self).replay().atQueue(queue).next { got.append($0.n) }
        bus.dispatch(PingEvent(n: 2))
        flush(queue)
        XCTAssertEqual(got.values, [1, 2])
        token.dispose()
    }
}

