// One engine, one shared bus: C code in this process (the C peer,
// Tests/QTEventBusCTestSupport/cpeer.c, through qtbus.h and qtbus_shared()) and Swift
// (QTEventBus.shared) see each other's events.
import QTEventBusTestSupport
import QTBusEngine
import QTEventBus
import QTEventBusCTestSupport
import XCTest

final class CrossLanguageTests: XCTestCase {
    let bus = QTEventBus.shared

    func testSharedBusIsCsSharedBus() {
        XCTAssertEqual(bus.cBus, _qtbus_shared())
        XCTAssertTrue(QTEventBus.shared === QTEventBus.shared)
    }

    func testCDispatchReachesASwiftNamedSubscriber() {
        let got = Recorder<QTNamedEvent>()
        let token = bus.on(named: "CrossNamed").next { got.append($0) }
        defer { token.dispose() }
        XCTAssertEqual(cpeer_dispatch("CrossNamed", "alice", "hello"), 1)
        XCTAssertEqual(cpeer_dispatch("CrossNamed", nil, nil), 1)
        XCTAssertEqual(got.values, [
            QTNamedEvent(type: "CrossNamed", subType: "alice", bytes: Array("hello".utf8)),
            QTNamedEvent(type: "CrossNamed", subType: nil, bytes: []),
        ])
        XCTAssertEqual(got.values.first?.text, "hello")
    }

    func testCDispatchReachesATypedSwiftSubscriberOfAJoinedName() {
        let got = Recorder<CLoginEvent>(), alice = Counter()
        let t1 = bus.on(CLoginEvent.self).next { got.append($0) }
        let t2 = bus.on(CLoginEvent.self).ofSubType("alice").next { _ in alice.increment() }
        defer { t1.dispose(); t2.dispose() }
        XCTAssertEqual(cpeer_dispatch("CLoginEvent", "alice", "alice"), 2)
        XCTAssertEqual(got.values, [CLoginEvent(userId: "alice")], "decoded from the C bytes")
        XCTAssertEqual(alice.value, 1)
    }

    func testSwiftTypedDispatchReachesACSubscriber() {
        let slot = cpeer_listen("CLoginEvent", nil)
        XCTAssertGreaterThanOrEqual(slot, 0)
        let c = CReceived(slot: slot)
        defer { c.stop() }
        let swift = Recorder<String>()
        let token = bus.on(CLoginEvent.self).next { swift.append($0.userId) }
        defer { token.dispose() }
        XCTAssertEqual(bus.dispatch(CLoginEvent(userId: "bob")), 2, "C and Swift subscribers, one engine")
        XCTAssertEqual(c.count, 1)
        XCTAssertEqual(c.type, "CLoginEvent")
        XCTAssertEqual(c.subType, "bob")
        XCTAssertEqual(c.data, "bob")
        XCTAssertEqual(c.size, 3)
        XCTAssertTrue(c.terminated, "bytes are NUL-terminated for C, the NUL not counted")
        XCTAssertEqual(swift.values, ["bob"])
    }

    func testSwiftNamedDispatchReachesACSubscriber() {
        let slot = cpeer_listen("CrossBytes", "x")
        let c = CReceived(slot: slot)
        defer { c.stop() }
        XCTAssertEqual(bus.dispatch(named: "CrossBytes", subType: "x", bytes: [0x41, 0x42]), 1)
        XCTAssertEqual(bus.dispatch(named: "CrossBytes", subType: "y", bytes: [0x43]), 0)
        XCTAssertEqual(c.count, 1)
        XCTAssertEqual(c.data, "AB")
        XCTAssertTrue(c.terminated)
        XCTAssertFalse(c.hadObject)
    }

    func testSwiftJSONReachesACJSONSubscriber() throws {
        let slot = cpeer_listen_json("profile")
        let c = CReceived(slot: slot)
        defer { c.stop() }
        XCTAssertEqual(try bus.dispatchJSON(name: "profile", json: #"{"name":"alice","age":3}"#), 1)
        XCTAssertEqual(c.type, QTEventBus.jsonTypeName)
        XCTAssertEqual(c.subType, "profile")
        XCTAssertEqual(c.data, #"{"name":"alice","age":3}"#)
        XCTAssertTrue(c.terminated)
        XCTAssertThrowsError(try bus.dispatchJSON(name: "profile", json: "{nope")) { error in
            XCTAssertEqual(error as? QTBusError, .invalidJSON)
        }
        XCTAssertEqual(c.count, 1, "invalid JSON is delivered to nobody")
    }

    func testCJSONReachesASwiftSubscriber() {
        let got = Recorder<String>()
        let token = bus.on(named: QTEventBus.jsonTypeName).ofSubType("settings").next { got.append($0.text) }
        defer { token.dispose() }
        XCTAssertEqual(cpeer_dispatch_json("settings", "[1,2,3]"), 1)
        XCTAssertEqual(cpeer_dispatch_json("settings", "[1,"), QTBusError.invalidJSON.rawValue)
        XCTAssertEqual(got.values, ["[1,2,3]"])
    }

    func testCEventsWithoutASwiftValueSkipTypedSubscribersThatCannotDecode() {
        struct Opaque: QTEvent { static var eventName: String { "CrossOpaque" } }
        let typed = Counter(), named = Counter()
        let t1 = bus.on(Opaque.self).next { _ in typed.increment() }
        let t2 = bus.on(named: "CrossOpaque").next { _ in named.increment() }
        defer { t1.dispose(); t2.dispose() }
        XCTAssertEqual(cpeer_dispatch("CrossOpaque", nil, "bytes"), 2, "both reached (the typed one skips)")
        XCTAssertEqual(typed.value, 0)
        XCTAssertEqual(named.value, 1)
        bus.dispatch(Opaque())
        XCTAssertEqual(typed.value, 1)
        XCTAssertEqual(named.value, 2, "Swift's typed dispatch reaches named subscribers of the name")
    }

    func testCMainLoopRunsSwiftMainQueueDeliveries() {
        // A C program pumps the main queue with qtbus_main_drain/qtbus_main_wait; Swift's
        // atQueue(.main) deliveries run there.
        let got = Recorder<String>()
        let token = bus.on(named: "CrossMain").atQueue(.main).next { got.append($0.subType ?? "") }
        defer { token.dispose() }
        DispatchQueue(label: "c.thread").sync { _ = cpeer_dispatch("CrossMain", "from-c", nil) }
        XCTAssertEqual(got.count, 0)
        XCTAssertTrue(drainMain { got.count == 1 })
        XCTAssertEqual(got.values, ["from-c"])
    }
}

import Dispatch
