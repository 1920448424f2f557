// SPDX-License-Identifier: MIT
// JSON events (QTEventBus's testJsonEvent) and Codable payloads, in Swift and across to
// C in the same process.
import QTEventBusTestSupport
import Foundation
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusFoundation
import Testing

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

extension QTBusTests {
    @Suite("JSON events")
    struct JsonEventTests {

        @Test func jsonEventFromADictionaryOrAnArray() throws {
            let bus = QTEventBus()
            let got = Recorder<QTJsonEvent>()
            let token = bus.on(QTJsonEvent.self).ofSubType("profile").next { got.append($0) }
            defer { token.dispose() }
            bus.dispatch(try QTJsonEvent(uniqueId: "profile", jsonObject: ["name": "alice", "age": 3]))
            bus.dispatch(try QTJsonEvent(uniqueId: "profile", jsonObject: [1, "two", NSNull()]))
            bus.dispatch(try QTJsonEvent(uniqueId: "other", jsonObject: ["x": 1]))
            #expect(got.count == 2)
            let dict = try #require(got.values.first?.jsonObject as? [String: Any])
            #expect(dict["name"] as? String == "alice")
            #expect((dict["age"] as? NSNumber)?.intValue == 3)
            let array = try #require(got.values.last?.jsonObject as? [Any])
            #expect(array.count == 3)
            #expect(got.values.first?.uniqueId == "profile")
            #expect(got.values.first?.eventSubType == "profile")
        }

        @Test func invalidObjectsAreErrorsNotCrashes() {
            #expect(throws: QTJsonEventError.invalidJSONObject, "top level must be a dictionary or an array") {
                try QTJsonEvent(uniqueId: "x", jsonObject: 5)
            }
            #expect(throws: QTJsonEventError.invalidJSONObject) {
                try QTJsonEvent(uniqueId: "x", jsonObject: ["when": Date()])
            }
            #expect(throws: QTJsonEventError.invalidJSONObject) {
                try QTJsonEvent(uniqueId: "x", jsonObject: [Double.nan])
            }
            // An invalid unique id traps: FoundationMisuseTests.
            #expect(throws: QTJsonEventError.invalidJSONText) {
                try QTJsonEvent(uniqueId: "x", jsonData: Data("{oops".utf8))
            }
        }

        @Test func swiftJsonEventReachesACSubscriber() throws {
            let slot = cpeer_listen_json("song")
            let c = CReceived(slot: slot)
            defer { c.stop() }
            let event = try QTJsonEvent(uniqueId: "song", jsonObject: ["id": 42])
            #expect(QTEventBus.shared.dispatch(event) == 1)
            #expect(c.count == 1)
            #expect(c.type == "QTJsonEvent")
            #expect(c.subType == "song")
            #expect(c.data == #"{"id":42}"#)
            #expect(c.terminated, "JSON text is NUL-terminated, as qtbus_dispatch_json's")
        }

        @Test func cJsonReachesASwiftJsonEventSubscriber() throws {
            let got = Recorder<QTJsonEvent>()
            let token = QTEventBus.shared.on(QTJsonEvent.self).ofSubType("from-c").next { got.append($0) }
            defer { token.dispose() }
            #expect(cpeer_dispatch_json("from-c", #"{"name":"bob","age":7}"#) == 1)
            #expect(got.count == 1)
            let event = try #require(got.values.first)
            #expect(event.uniqueId == "from-c")
            #expect(try event.decode(Profile.self) == Profile(name: "bob", age: 7))
            #expect((event.jsonObject as? [String: Any])?["name"] as? String == "bob")
        }

        @Test func codableRepliesBothWays() async throws {
            // Swift replier, Swift sender: decoded back to the value.  C sender: JSON bytes.
            let bus = QTEventBus.shared
            let token = bus.on(SessionRequest.self).reply { request in [Session(user: request.account, expires: 3600)] }
            defer { token.dispose() }

            let sessions = try await bus.request(SessionRequest(account: "alice"), replyAs: Session.self)
            #expect(sessions == [Session(user: "alice", expires: 3600)])

            #expect(cpeer_request("SessionRequest", nil, #"{"account":"bob"}"#) == 1)
            let replies = cRequestReplies()
            #expect(replies.hasSuffix("|"), Comment(rawValue: replies))
            let json = Data(replies.dropLast().utf8)
            #expect(
                try JSONDecoder().decode(Session.self, from: json) == Session(user: "bob", expires: 3600),
                "C read the reply's JSON encoding")
            #expect(Session(qtBytes: UnsafeRawBufferPointer(start: nil, count: 0)) == nil, "bytes that do not decode")
        }

        @Test func codablePayloadsBothWays() throws {
            // Swift -> Swift and C (JSON bytes), C -> Swift (decoded).
            let bus = QTEventBus.shared
            let slot = cpeer_listen("DownloadEvent", nil)
            let c = CReceived(slot: slot)
            defer { c.stop() }
            let got = Recorder<Download>()
            let token = bus.on(Download.self).ofSubType("42").next { got.append($0) }
            defer { token.dispose() }

            #expect(bus.dispatch(Download(songId: "42", progress: 0.5)) == 2)
            #expect(got.values == [Download(songId: "42", progress: 0.5)])
            let sent = try JSONDecoder().decode(Download.self, from: Data(c.data.utf8))
            #expect(sent == Download(songId: "42", progress: 0.5), "C read the JSON encoding")

            #expect(cpeer_dispatch("DownloadEvent", "42", #"{"songId":"42","progress":1}"#) == 2)
            #expect(got.values.last == Download(songId: "42", progress: 1), "decoded from C's bytes")
            #expect(cpeer_dispatch("DownloadEvent", "42", "not json") == 2)
            #expect(got.count == 2, "bytes that do not decode are skipped")
        }

        @Test func jsonEventFromAnEncodableAndDispatchJSON() throws {
            let bus = QTEventBus()
            let got = Recorder<Profile>()
            let token = bus.on(QTJsonEvent.self).ofSubType("p").next { event in
                if let profile = try? event.decode(Profile.self) { got.append(profile) }
            }
            defer { token.dispose() }
            bus.dispatch(try QTJsonEvent(uniqueId: "p", encoding: Profile(name: "a", age: 1)))
            try bus.dispatchJSON(name: "p", encoding: Profile(name: "b", age: 2))
            try bus.dispatchJSON(name: "p", json: #"{"name":"c","age":3}"#)  // QTEventBus's text form
            #expect(got.values == [Profile(name: "a", age: 1), Profile(name: "b", age: 2), Profile(name: "c", age: 3)])
        }
    }
}
