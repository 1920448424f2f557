// JSON events (QTEventBus's testJsonEvent) and Codable payloads, in Swift and across to
// C in the same process.
import QTEventBusTestSupport
import Foundation
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusFoundation
import XCTest

/// A Codable event C code can read (JSON bytes) and send.
struct Download: QTCodableEvent, Equatable {
    static var eventName: String { "DownloadEvent" }
    let songId: String
    let progress: Double
    var eventSubType: String? { songId }
}

struct Profile: Codable, Equatable {
    let name: String
    let age: Int
}

/// A reply that crosses to C as JSON.
struct Session: QTCodableBytes, Equatable {
    let user: String
    let expires: Int
}

/// A request typed in Swift, named for C.
struct SessionRequest: QTCodableEvent {
    static var eventName: String { "SessionRequest" }
    let account: String
}

final class JsonEventTests: XCTestCase {

    func testJsonEventFromADictionaryOrAnArray() throws {
        let bus = QTEventBus()
        let got = Recorder<QTJsonEvent>()
        let token = bus.on(QTJsonEvent.self).ofSubType("profile").next { got.append($0) }
        defer { token.dispose() }
        bus.dispatch(try QTJsonEvent(uniqueId: "profile", jsonObject: ["name": "alice", "age": 3]))
        bus.dispatch(try QTJsonEvent(uniqueId: "profile", jsonObject: [1, "two", NSNull()]))
        bus.dispatch(try QTJsonEvent(uniqueId: "other", jsonObject: ["x": 1]))
        XCTAssertEqual(got.count, 2)
        let dict = try XCTUnwrap(got.values.first?.jsonObject as? [String: Any])
        XCTAssertEqual(dict["name"] as? String, "alice")
        XCTAssertEqual((dict["age"] as? NSNumber)?.intValue, 3)
        let array = try XCTUnwrap(got.values.last?.jsonObject as? [Any])
        XCTAssertEqual(array.count, 3)
        XCTAssertEqual(got.values.first?.uniqueId, "profile")
        XCTAssertEqual(got.values.first?.eventSubType, "profile")
    }

    func testInvalidObjectsAreErrorsNotCrashes() {
        XCTAssertThrowsError(try QTJsonEvent(uniqueId: "x", jsonObject: 5)) {
            XCTAssertEqual($0 as? QTJsonEventError, .invalidJSONObject, "top level must be a dictionary or an array")
        }
        XCTAssertThrowsError(try QTJsonEvent(uniqueId: "x", jsonObject: ["when": Date()])) {
            XCTAssertEqual($0 as? QTJsonEventError, .invalidJSONObject)
        }
        XCTAssertThrowsError(try QTJsonEvent(uniqueId: "x", jsonObject: [Double.nan])) {
            XCTAssertEqual($0 as? QTJsonEventError, .invalidJSONObject)
        }
        XCTAssertThrowsError(try QTJsonEvent(uniqueId: "", jsonObject: ["a": 1])) {
            XCTAssertEqual($0 as? QTJsonEventError, .invalidUniqueId)
        }
        XCTAssertThrowsError(try QTJsonEvent(uniqueId: "x", jsonData: Data("{oops".utf8))) {
            XCTAssertEqual($0 as? QTJsonEventError, .invalidJSONText)
        }
    }

    func testSwiftJsonEventReachesACSubscriber() throws {
        let slot = cpeer_listen_json("song")
        let c = CReceived(slot: slot)
        defer { c.stop() }
        let event = try QTJsonEvent(uniqueId: "song", jsonObject: ["id": 42])
        XCTAssertEqual(QTEventBus.shared.dispatch(event), 1)
        XCTAssertEqual(c.count, 1)
        XCTAssertEqual(c.type, "QTJsonEvent")
        XCTAssertEqual(c.subType, "song")
        XCTAssertEqual(c.data, #"{"id":42}"#)
        XCTAssertTrue(c.terminated, "JSON text is NUL-terminated, as qtbus_dispatch_json's")
    }

    func testCJsonReachesASwiftJsonEventSubscriber() throws {
        let got = Recorder<QTJsonEvent>()
        let token = QTEventBus.shared.on(QTJsonEvent.self).ofSubType("from-c").next { got.append($0) }
        defer { token.dispose() }
        XCTAssertEqual(cpeer_dispatch_json("from-c", #"{"name":"bob","age":7}"#), 1)
        XCTAssertEqual(got.count, 1)
        let event = try XCTUnwrap(got.values.first)
        XCTAssertEqual(event.uniqueId, "from-c")
        XCTAssertEqual(try event.decode(Profile.self), Profile(name: "bob", age: 7))
        XCTAssertEqual((event.jsonObject as? [String: Any])?["name"] as? String, "bob")
    }

    func testCodableRepliesBothWays() async throws {
        // Swift replier, Swift sender: decoded back to the value.  C sender: JSON bytes.
        let bus = QTEventBus.shared
        let token = bus.on(SessionRequest.self).reply { request in [Session(user: request.account, expires: 3600)] }
        defer { token.dispose() }

        let sessions = await bus.request(SessionRequest(account: "alice"), replyAs: Session.self)
        XCTAssertEqual(sessions, [Session(user: "alice", expires: 3600)])

        XCTAssertEqual(cpeer_request("SessionRequest", nil, #"{"account":"bob"}"#), 1)
        let replies = cRequestReplies()
        XCTAssertTrue(replies.hasSuffix("|"), replies)
        let json = Data(replies.dropLast().utf8)
        XCTAssertEqual(try JSONDecoder().decode(Session.self, from: json), Session(user: "bob", expires: 3600),
                       "C read the reply's JSON encoding")
        XCTAssertNil(Session(qtBytes: UnsafeRawBufferPointer(start: nil, count: 0)), "bytes that do not decode")
    }

    func testCodablePayloadsBothWays() throws {
        // Swift -> Swift and C (JSON bytes), C -> Swift (decoded).
        let bus = QTEventBus.shared
        let slot = cpeer_listen("DownloadEvent", nil)
        let c = CReceived(slot: slot)
        defer { c.stop() }
        let got = Recorder<Download>()
        let token = bus.on(Download.self).ofSubType("42").next { got.append($0) }
        defer { token.dispose() }

        XCTAssertEqual(bus.dispatch(Download(songId: "42", progress: 0.5)), 2)
        XCTAssertEqual(got.values, [Download(songId: "42", progress: 0.5)])
        let sent = try JSONDecoder().decode(Download.self, from: Data(c.data.utf8))
        XCTAssertEqual(sent, Download(songId: "42", progress: 0.5), "C read the JSON encoding")

        XCTAssertEqual(cpeer_dispatch("DownloadEvent", "42", #"{"songId":"42","progress":1}"#), 2)
        XCTAssertEqual(got.values.last, Download(songId: "42", progress: 1), "decoded from C's bytes")
        XCTAssertEqual(cpeer_dispatch("DownloadEvent", "42", "not json"), 2)
        XCTAssertEqual(got.count, 2, "bytes that do not decode are skipped")
    }

    func testJsonEventFromAnEncodableAndDispatchJSON() throws {
        let bus = QTEventBus()
        let got = Recorder<Profile>()
        let token = bus.on(QTJsonEvent.self).ofSubType("p").next { event in
            if let profile = try? event.decode(Profile.self) { got.append(profile) }
        }
        defer { token.dispose() }
        bus.dispatch(try QTJsonEvent(uniqueId: "p", encoding: Profile(name: "a", age: 1)))
        try bus.dispatchJSON(name: "p", encoding: Profile(name: "b", age: 2))
        try bus.dispatchJSON(name: "p", json: #"{"name":"c","age":3}"#)  // QTEventBus's text form
        XCTAssertEqual(got.values, [Profile(name: "a", age: 1), Profile(name: "b", age: 2), Profile(name: "c", age: 3)])
    }
}
