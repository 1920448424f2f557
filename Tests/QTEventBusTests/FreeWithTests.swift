// freeWith(object) on Linux (QTEventBus's attach tests): once the object is gone the
// handler never runs again and its closure is released no later than the next dispatch
// of the type; freeWith(nil) attaches to nothing.
import QTEventBusTestSupport
import Dispatch
import QTEventBus
import XCTest

final class FreeWithTests: XCTestCase {

    func testHandlerStopsAndClosureIsReleasedAtTheNextDispatch() {
        let bus = QTEventBus()
        let calls = Counter()
        var owner: Owner? = Owner()
        weak let weakOwner = owner
        weak var watched: Token?
        do {
            let captured = Token()
            watched = captured
            bus.on(PingEvent.self).freeWith(owner!).next { _ in _ = captured; calls.increment() }
        }
        bus.dispatch(PingEvent(n: 1))
        XCTAssertEqual(calls.value, 1)
        owner = nil
        XCTAssertNil(weakOwner, "the subscription holds its object weakly")
        XCTAssertNotNil(watched, "nothing noticed yet: Linux has no associated objects")
        bus.dispatch(PingEvent(n: 2))
        XCTAssertEqual(calls.value, 1, "never called after the object is gone")
        XCTAssertNil(watched, "closure released by the end of the next dispatch")
        XCTAssertEqual(bus.subscriberCount(of: PingEvent.self), 0)
    }

    func testSubtypeSubscriptionIsReleasedByADispatchOfAnotherSubtype() {
        let bus = QTEventBus()
        let calls = Counter()
        var owner: Owner? = Owner()
        weak var watched: Token?
        do {
            let captured = Token()
            watched = captured
            bus.on(LoginEvent.self).ofSubType("alice").freeWith(owner!).next { _ in _ = captured; calls.increment() }
        }
        owner = nil
        bus.dispatch(LoginEvent(userId: "bob"))  // does not reach the "alice" subscription
        XCTAssertNil(watched, "swept by the next dispatch of the type, whatever its subtype")
        bus.dispatch(LoginEvent(userId: "alice"))
        XCTAssertEqual(calls.value, 0)
        XCTAssertEqual(bus.subscriberCount(of: LoginEvent.self), 0)
    }

    func testNamedSubscriptionsAreSweptByNamedDispatches() {
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
        XCTAssertNil(watched)
    }

    func testObjectThatLivesKeepsTheSubscription() {
        let bus = QTEventBus()
        let owner = Owner()
        let calls = Counter()
        let token = bus.on(LoginEvent.self).ofSubType("alice").freeWith(owner).next { _ in calls.increment() }
        for _ in 0..<3 {
            bus.dispatch(LoginEvent(userId: "alice"))
            bus.dispatch(LoginEvent(userId: "bob"))
        }
        XCTAssertEqual(calls.value, 3)
        XCTAssertTrue(token.isActive)
        withExtendedLifetime(owner) {}
        token.dispose()
    }

    func testQueuedHopChecksTheObjectWhenItRuns() {
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
        XCTAssertEqual(calls.value, 0, "the object died before the hop ran")
        XCTAssertFalse(token.isActive)
    }

    func testFreeWithNilAttachesToNothing() {
        // QTEventBus's nil-attach test: no crash, and the subscription simply lives.
        let bus = QTEventBus()
        let calls = Counter()
        let token = bus.on(PingEvent.self).freeWith(nil).next { _ in calls.increment() }
        bus.dispatch(PingEvent(n: 1))
        bus.dispatch(PingEvent(n: 2))
        XCTAssertEqual(calls.value, 2)
        XCTAssertTrue(token.isActive)
        token.dispose()
    }

    func testManyOwnersOnlyTheDeadOnesEnd() {
        let bus = QTEventBus()
        var owners: [Owner?] = (0..<20).map { _ in Owner() }
        let calls = Recorder<Int>()
        for i in 0..<20 {
            bus.on(LoginEvent.self).ofSubType("u\(i)").freeWith(owners[i]!).next { _ in calls.append(i) }
        }
        for i in stride(from: 0, to: 20, by: 2) { owners[i] = nil }
        bus.dispatch(LoginEvent(userId: "nobody"))
        XCTAssertEqual(bus.subscriberCount(of: LoginEvent.self), 10)
        for i in 0..<20 { bus.dispatch(LoginEvent(userId: "u\(i)")) }
        XCTAssertEqual(calls.values, Array(stride(from: 1, to: 20, by: 2)))
        owners.removeAll()
        bus.dispatch(LoginEvent(userId: "nobody"))
        XCTAssertEqual(bus.subscriberCount(of: LoginEvent.self), 0)
    }
}
