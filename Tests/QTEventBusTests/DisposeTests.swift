// Manual dispose, DisposeBag, and closure lifetimes checked with weak references.
import QTEventBusTestSupport
import Dispatch
import QTEventBus
import XCTest

final class DisposeTests: XCTestCase {

    func testManualDisposeStopsDeliveryAndReleasesTheClosure() {
        let bus = QTEventBus()
        let calls = Counter()
        weak var watched: Token?
        let token: QTEventToken
        do {
            let captured = Token()
            watched = captured
            token = bus.on(PingEvent.self).next { _ in _ = captured; calls.increment() }
        }
        bus.dispatch(PingEvent(n: 1))
        XCTAssertNotNil(watched)
        token.dispose()
        XCTAssertFalse(token.isActive)
        XCTAssertNil(watched, "lifetime rule 1: released before dispose returned (no dispatch in progress)")
        bus.dispatch(PingEvent(n: 2))
        XCTAssertEqual(calls.value, 1)
        token.dispose()  // a second dispose is harmless
    }

    func testHandlerMayDisposeItsOwnToken() {
        let bus = QTEventBus()
        let slot = LockedValue<QTEventToken?>()
        let calls = Counter()
        weak var watched: Token?
        do {
            let captured = Token()
            watched = captured
            slot.value = (bus.on(PingEvent.self).next { _ in
                _ = captured
                calls.increment()
                slot.value?.dispose()
            })
        }
        bus.dispatch(PingEvent(n: 1))
        bus.dispatch(PingEvent(n: 2))
        XCTAssertEqual(calls.value, 1)
        XCTAssertNil(watched, "released when the dispatch that disposed it returned")
    }

    func testDisposeBagDisposesOnDeinit() {
        let bus = QTEventBus()
        let calls = Counter()
        weak var watched: Token?
        var bag: DisposeBag? = DisposeBag()
        weak let weakBag = bag
        do {
            let captured = Token()
            watched = captured
            bus.on(PingEvent.self).disposed(by: bag!).next { _ in _ = captured; calls.increment() }
            bus.on(LoginEvent.self).next { _ in calls.increment() }.disposed(by: bag!)
        }
        XCTAssertEqual(bag?.count, 2)
        bus.dispatch(PingEvent(n: 1))
        XCTAssertEqual(calls.value, 1)
        bag = nil
        XCTAssertNil(weakBag, "tokens do not keep their bag alive")
        XCTAssertNil(watched)
        bus.dispatch(PingEvent(n: 2))
        bus.dispatch(LoginEvent(userId: "x"))
        XCTAssertEqual(calls.value, 1)
        XCTAssertEqual(bus.subscriberCount(of: PingEvent.self) + bus.subscriberCount(of: LoginEvent.self), 0)
    }

    func testDisposeBagDisposeAndReuse() {
        let bus = QTEventBus()
        let bag = DisposeBag()
        let calls = Counter()
        bus.on(PingEvent.self).disposed(by: bag).next { _ in calls.increment() }
        bag.dispose()
        bus.dispatch(PingEvent(n: 1))
        XCTAssertEqual(calls.value, 0)
        bus.on(PingEvent.self).disposed(by: bag).next { _ in calls.increment() }
        bus.dispatch(PingEvent(n: 2))
        XCTAssertEqual(calls.value, 1, "the bag stays usable")
        bag.dispose()
        XCTAssertEqual(bag.count, 0)
    }

    func testBagPrunesTokensThatEnded() {
        let bus = QTEventBus()
        let bag = DisposeBag()
        for _ in 0..<1000 {
            bus.on(PingEvent.self).once().disposed(by: bag).next { _ in }
            bus.dispatch(PingEvent(n: 0))
        }
        XCTAssertLessThan(bag.count, 100, "fired ONCE tokens do not pile up")
    }

    func testDestroyingABusReleasesItsSubscriptions() {
        weak var watched: Token?
        var bus: QTEventBus? = QTEventBus()
        let token: QTEventToken
        do {
            let captured = Token()
            watched = captured
            token = bus!.on(PingEvent.self).next { _ in _ = captured }
        }
        bus = nil
        XCTAssertNil(watched)
        XCTAssertFalse(token.isActive)
        token.dispose()  // ESTALE inside, harmless
    }

    func testDisposeFromAnotherThreadWhileDispatching() {
        // Rule 2 across threads: after dispose returns, no new call starts.
        let bus = QTEventBus()
        let calls = Counter()
        let stop = Counter()
        let afterDispose = Counter()
        let disposed = Counter()
        let token = bus.on(PingEvent.self).next { _ in
            if disposed.value == 1 { afterDispose.increment() }
            calls.increment()
        }
        let dispatcher = DispatchQueue(label: "test.dispatcher")
        dispatcher.async {
            while stop.value == 0 { bus.dispatch(PingEvent(n: 0)) }
        }
        XCTAssertTrue(waitUntil { calls.value > 100 })
        token.dispose()
        // A call that began before dispose returned may still be running; give it time
        // to finish, then any further call would be a new one.
        usleep(20_000)
        disposed.increment()
        let before = calls.value
        usleep(20_000)
        stop.increment()
        flush(dispatcher)
        XCTAssertEqual(calls.value, before)
        XCTAssertEqual(afterDispose.value, 0)
    }
}
