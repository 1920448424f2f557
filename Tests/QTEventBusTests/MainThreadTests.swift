// SPDX-License-Identifier: MIT
// The tests that need the process's main thread, the only one qtbus_main_drain and
// qtbus_main_wait run on (qtbus.h): Swift's DispatchQueue.main is the engine's main
// queue, and its work runs when C's pump runs there, not before.
//
// They stay XCTest cases, the only ones of the package: XCTest runs each test method
// on the main thread, and swift-testing cannot.  Its SwiftPM entry point starts with
// Swift's async main, which hands the main thread to dispatch_main(); on Linux that
// parks the thread for good and lets libdispatch threads run the main queue, so no
// swift-testing test, @MainActor or not, is on the main thread (qtbus_main_wait says
// QTBUS_EINVAL) or can keep the main queue from running.  XCTest's and swift-testing's
// runs are separate processes, so these never overlap the other tests.
import Dispatch
import QTBusEngine
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport
import XCTest

final class MainThreadTests: XCTestCase {

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

    func testCMainLoopRunsSwiftMainQueueDeliveries() {
        // A C program pumps the main queue with qtbus_main_drain/qtbus_main_wait; Swift's
        // atQueue(.main) deliveries run there.  (On the shared bus, as CrossLanguageTests.)
        let bus = QTEventBus.shared
        let got = Recorder<String>()
        let token = bus.on(named: "CrossMain").atQueue(.main).next { got.append($0.subType ?? "") }
        defer { token.dispose() }
        DispatchQueue(label: "c.thread").sync { _ = cpeer_dispatch("CrossMain", "from-c", nil) }
        XCTAssertEqual(got.count, 0)
        XCTAssertTrue(drainMain { got.count == 1 })
        XCTAssertEqual(got.values, ["from-c"])
    }
}
