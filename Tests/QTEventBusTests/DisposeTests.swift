// SPDX-License-Identifier: MIT
// Manual dispose, QTDisposeBag, and closure lifetimes checked with weak references.
import QTEventBusTestSupport
import Dispatch
import Glibc
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("Dispose")
    struct DisposeTests {

        @Test func manualDisposeStopsDeliveryAndReleasesTheClosure() {
            let bus = QTEventBus()
            let calls = Counter()
            weak var watched: Token?
            let token: QTEventToken
            do {
                let captured = Token()
                watched = captured
                token = bus.on(PingEvent.self).next { _ in
                    _ = captured
                    calls.increment()
                }
            }
            bus.dispatch(PingEvent(n: 1))
            #expect(watched != nil)
            token.dispose()
            #expect(!token.isActive)
            #expect(watched == nil, "lifetime rule 1: released before dispose returned (no dispatch in progress)")
            bus.dispatch(PingEvent(n: 2))
            #expect(calls.value == 1)
            token.dispose()  // a second dispose is harmless
        }

        @Test func handlerMayDisposeItsOwnToken() {
            let bus = QTEventBus()
            let slot = LockedValue<QTEventToken?>()
            let calls = Counter()
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                slot.value =
                    (bus.on(PingEvent.self).next { _ in
                        _ = captured
                        calls.increment()
                        slot.value?.dispose()
                    })
            }
            bus.dispatch(PingEvent(n: 1))
            bus.dispatch(PingEvent(n: 2))
            #expect(calls.value == 1)
            #expect(watched == nil, "released when the dispatch that disposed it returned")
        }

        @Test func disposeBagDisposesOnDeinit() {
            let bus = QTEventBus()
            let calls = Counter()
            weak var watched: Token?
            var bag: QTDisposeBag? = QTDisposeBag()
            weak let weakBag = bag
            do {
                let captured = Token()
                watched = captured
                bus.on(PingEvent.self).disposed(by: bag!).next { _ in
                    _ = captured
                    calls.increment()
                }
                bus.on(LoginEvent.self).next { _ in calls.increment() }.disposed(by: bag!)
            }
            #expect(bag?.count == 2)
            bus.dispatch(PingEvent(n: 1))
            #expect(calls.value == 1)
            bag = nil
            #expect(weakBag == nil, "tokens do not keep their bag alive")
            #expect(watched == nil)
            bus.dispatch(PingEvent(n: 2))
            bus.dispatch(LoginEvent(userId: "x"))
            #expect(calls.value == 1)
            #expect(bus.subscriberCount(of: PingEvent.self) + bus.subscriberCount(of: LoginEvent.self) == 0)
        }

        @Test func disposeBagDisposeAndReuse() {
            let bus = QTEventBus()
            let bag = QTDisposeBag()
            let calls = Counter()
            bus.on(PingEvent.self).disposed(by: bag).next { _ in calls.increment() }
            bag.dispose()
            bus.dispatch(PingEvent(n: 1))
            #expect(calls.value == 0)
            bus.on(PingEvent.self).disposed(by: bag).next { _ in calls.increment() }
            bus.dispatch(PingEvent(n: 2))
            #expect(calls.value == 1, "the bag stays usable")
            bag.dispose()
            #expect(bag.count == 0)
        }

        @Test func bagPrunesTokensThatEnded() {
            let bus = QTEventBus()
            let bag = QTDisposeBag()
            for _ in 0..<1000 {
                bus.on(PingEvent.self).once().disposed(by: bag).next { _ in }
                bus.dispatch(PingEvent(n: 0))
            }
            #expect(bag.count < 100, "fired ONCE tokens do not pile up")
        }

        @Test func destroyingABusReleasesItsSubscriptions() {
            weak var watched: Token?
            var bus: QTEventBus? = QTEventBus()
            let token: QTEventToken
            do {
                let captured = Token()
                watched = captured
                token = bus!.on(PingEvent.self).next { _ in _ = captured }
            }
            bus = nil
            #expect(watched == nil)
            #expect(!token.isActive)
            token.dispose()  // ESTALE inside, harmless
        }

        @Test func disposeFromAnotherThreadWhileDispatching() {
            // Rule 2 across threads: after dispose returns, no new call starts.  A call
            // that began before may still be running, so the dispatcher itself marks the
            // dispatches that begin once dispose has returned, and only those must call
            // nothing (no sleep guessing how long a call in progress takes).
            let bus = QTEventBus()
            let calls = Counter()
            let stop = Counter()
            let afterDispose = Counter()
            let disposed = Counter()
            let lateDispatches = Counter()
            let token = bus.on(PingEvent.self).next { _ in
                // On the dispatcher's thread, inside its dispatch.
                if lateDispatches.value > 0 { afterDispose.increment() }
                calls.increment()
            }
            let dispatcher = DispatchQueue(label: "test.dispatcher")
            dispatcher.async {
                while stop.value == 0 {
                    if disposed.value == 1 { lateDispatches.increment() }
                    bus.dispatch(PingEvent(n: 0))
                }
            }
            #expect(waitUntil { calls.value > 100 })
            token.dispose()
            disposed.increment()
            #expect(waitUntil { lateDispatches.value > 100 })
            stop.increment()
            flush(dispatcher)
            #expect(afterDispose.value == 0)
        }
    }
}
