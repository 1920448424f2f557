// SPDX-License-Identifier: MIT
// QTEventBusFoundation follows the error rule of QTEventBus: each call that takes a name
// (a notification's, a JSON event's unique id) traps on an invalid one, in a child
// process here, naming the call, the name and the reason; a payload that is not JSON is
// thrown, since it may come from anywhere.
import Foundation
import QTEventBus
import QTEventBusFoundation
import QTEventBusTestSupport
import Testing

/// One programmer error, run in a child process, and the message it must trap with
/// (after "QTEventBus: ").
enum FoundationMisuseCase: String, Codable, Sendable, CaseIterable {
    case dispatchNotificationEmptyName, observeEmptyNotificationName, claimNULNotificationName
    case jsonObjectEmptyId, jsonDataLongId, jsonEncodingNULId, dispatchJSONEncodingEmptyName

    var expected: String {
        let long = "\"" + String(repeating: "y", count: 48) + "...\""
        switch self {
        case .dispatchNotificationEmptyName: return "dispatch(_:) of Notification: the subtype \"\" is empty"
        case .observeEmptyNotificationName: return "ofSubType(_:): the subtype \"\" is empty"
        case .claimNULNotificationName:
            return "QTNotificationEvent.startSource(on:subTypes:): the subtype \"a\\x00b\" contains a NUL byte"
        case .jsonObjectEmptyId: return "QTJsonEvent.init(uniqueId:jsonObject:): the name \"\" is empty"
        case .jsonDataLongId: return "QTJsonEvent.init(uniqueId:jsonData:): the name \(long) is longer than 255 bytes"
        case .jsonEncodingNULId:
            return "QTJsonEvent.init(uniqueId:encoding:encoder:): the name \"a\\x00b\" contains a NUL byte"
        case .dispatchJSONEncodingEmptyName: return "dispatchJSON(name:encoding:encoder:): the name \"\" is empty"
        }
    }

    func run() throws {
        let bus = QTEventBus()
        switch self {
        case .dispatchNotificationEmptyName: bus.dispatch(Notification(name: Notification.Name("")))
        case .observeEmptyNotificationName: bus.on(Notification.self).ofSubType("").next { _ in }
        case .claimNULNotificationName: _ = QTNotificationEvent.startSource(on: bus, subTypes: ["ok", "a\u{0}b"])
        case .jsonObjectEmptyId: _ = try QTJsonEvent(uniqueId: "", jsonObject: ["a": 1])
        case .jsonDataLongId:
            _ = try QTJsonEvent(uniqueId: String(repeating: "y", count: 300), jsonData: Data("{}".utf8))
        case .jsonEncodingNULId: _ = try QTJsonEvent(uniqueId: "a\u{0}b", encoding: [1, 2])
        case .dispatchJSONEncodingEmptyName: _ = try bus.dispatchJSON(name: "", encoding: [1, 2])
        }
    }
}

extension QTBusTests {
    @Suite("Foundation misuse traps")
    struct FoundationMisuseTests {
        @Test(arguments: FoundationMisuseCase.allCases)
        func programmerErrorsTrapNamingTheCallTheNameAndTheReason(_ misuse: FoundationMisuseCase) async throws {
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [misuse] in
                try misuse.run()
            }
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("QTEventBus: " + misuse.expected), "\(text)")
        }

        @Test func aNameAtTheLimitIsTaken() throws {
            let name = String(repeating: "n", count: 255)
            let bus = QTEventBus()
            let got = Counter()
            let token = bus.on(QTJsonEvent.self).ofSubType(name).next { _ in got.increment() }
            #expect(try bus.dispatchJSON(name: name, encoding: ["k": 1]) == 1)
            #expect(bus.dispatch(try QTJsonEvent(uniqueId: name, jsonData: Data("[]".utf8))) == 1)
            #expect(bus.dispatch(Notification(name: Notification.Name(name))) == 0)
            #expect(got.value == 2)
            token.dispose()
        }
    }
}
