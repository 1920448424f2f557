// SPDX-License-Identifier: MIT
// One engine, one shared bus: C code in this process (the C peer,
// Tests/QTEventBusCTestSupport/cpeer.c, through qtbus.h and qtbus_shared()) and Swift
// (QTEventBus.shared) see each other's events.
import QTEventBusTestSupport
import QTBusEngine
import QTEventBus
import QTEventBusCTestSupport
import Testing

extension QTBusTests {
    @Suite("Cross-language (C and Swift)")
    struct CrossLanguageTests {
        let bus = QTEventBus.shared

        @Test func sharedBusIsCsSharedBus() {
            #expect(bus.cBus == _qtbus_shared())
            #expect(QTEventBus.shared === QTEventBus.shared)
        }

        @Test func cDispatchReachesASwiftNamedSubscriber() {
            let got = Recorder<QTNamedEvent>()
            let token = bus.on(named: "CrossNamed").next { got.append($0) }
            defer { token.dispose() }
            #expect(cpeer_dispatch("CrossNamed", "alice", "hello") == 1)
            #expect(cpeer_dispatch("CrossNamed", nil, nil) == 1)
            #expect(
                got.values == [
                    QTNamedEvent(type: "CrossNamed", subType: "alice", bytes: Array("hello".utf8)),
                    QTNamedEvent(type: "CrossNamed", subType: nil, bytes: []),
                ])
            #expect(got.values.first?.text == "hello")
        }

        @Test func cDispatchReachesATypedSwiftSubscriberOfAJoinedName() {
            let got = Recorder<CLoginEvent>(), alice = Counter()
            let t1 = bus.on(CLoginEvent.self).next { got.append($0) }
            let t2 = bus.on(CLoginEvent.self).ofSubType("alice").next { _ in alice.increment() }
            defer {
                t1.dispose()
                t2.dispose()
            }
            #expect(cpeer_dispatch("CLoginEvent", "alice", "alice") == 2)
            #expect(got.values == [CLoginEvent(userId: "alice")], "decoded from the C bytes")
            #expect(alice.value == 1)
        }

        @Test func swiftTypedDispatchReachesACSubscriber() {
            let slot = cpeer_listen("CLoginEvent", nil)
            #expect(slot >= 0)
            let c = CReceived(slot: slot)
            defer { c.stop() }
            let swift = Recorder<String>()
            let token = bus.on(CLoginEvent.self).next { swift.append($0.userId) }
            defer { token.dispose() }
            #expect(bus.dispatch(CLoginEvent(userId: "bob")) == 2, "C and Swift subscribers, one engine")
            #expect(c.count == 1)
            #expect(c.type == "CLoginEvent")
            #expect(c.subType == "bob")
            #expect(c.data == "bob")
            #expect(c.size == 3)
            #expect(c.terminated, "bytes are NUL-terminated for C, the NUL not counted")
            #expect(swift.values == ["bob"])
        }

        @Test func swiftNamedDispatchReachesACSubscriber() {
            let slot = cpeer_listen("CrossBytes", "x")
            let c = CReceived(slot: slot)
            defer { c.stop() }
            #expect(bus.dispatch(named: "CrossBytes", subType: "x", bytes: [0x41, 0x42]) == 1)
            #expect(bus.dispatch(named: "CrossBytes", subType: "y", bytes: [0x43]) == 0)
            #expect(c.count == 1)
            #expect(c.data == "AB")
            #expect(c.terminated)
            #expect(!c.hadObject)
        }

        @Test func swiftJSONReachesACJSONSubscriber() throws {
            let slot = cpeer_listen_json("profile")
            let c = CReceived(slot: slot)
            defer { c.stop() }
            #expect(try bus.dispatchJSON(name: "profile", json: #"{"name":"alice","age":3}"#) == 1)
            #expect(c.type == QTEventBus.jsonTypeName)
            #expect(c.subType == "profile")
            #expect(c.data == #"{"name":"alice","age":3}"#)
            #expect(c.terminated)
            #expect(throws: QTBusError.invalidJSON) { try bus.dispatchJSON(name: "profile", json: "{nope") }
            #expect(c.count == 1, "invalid JSON is delivered to nobody")
        }

        @Test func cJSONReachesASwiftSubscriber() {
            let got = Recorder<String>()
            let token = bus.on(named: QTEventBus.jsonTypeName).ofSubType("settings").next { got.append($0.text) }
            defer { token.dispose() }
            #expect(cpeer_dispatch_json("settings", "[1,2,3]") == 1)
            #expect(cpeer_dispatch_json("settings", "[1,") == QTBusError.invalidJSON.rawValue)
            #expect(got.values == ["[1,2,3]"])
        }

        @Test func cTypedSignalReachesASwiftNamedSubscriber() throws {
            let got = Recorder<QTNamedEvent>()
            let token = bus.on(named: "CrossSignal").next { got.append($0) }
            defer { token.dispose() }
            #expect(cpeer_signal_define_text_int("CrossSignal") == 0)
            #expect(cpeer_signal_emit_text_int("CrossSignal", "alice", "h\u{e9}llo", -7) == 1)
            #expect(cpeer_signal_emit_text_int("CrossSignal", nil, nil, Int32.min) == 1)
            #expect(got.values.map(\.subType) == ["alice", nil])
            let first = try #require(SignalArguments(got.values.first?.bytes ?? []))
            #expect(first.kinds == [6, 1], "QTBUS_ARG_STRING, QTBUS_ARG_INT32")
            #expect(first.text(0) == "h\u{e9}llo")
            #expect(first.int32(1) == -7)
            let second = try #require(SignalArguments(got.values.last?.bytes ?? []))
            #expect(second.text(0) == nil, "a NULL string stays NULL")
            #expect(second.int32(1) == Int32.min)
            // The Swift view reads the same.
            #expect(got.values.first?.signalArguments == [.string("h\u{e9}llo"), .int32(-7)])
            #expect(got.values.last?.signalArguments == [.string(nil), .int32(Int32.min)])
        }

        @Test func signalArgumentsOfBytesThatAreNotASignalsAreNil() throws {
            #expect(QTNamedEvent(type: "T", bytes: Array("hello".utf8)).signalArguments == nil)
            #expect(QTNamedEvent(type: "T").signalArguments == nil)
            // A header with no arguments is a signal of none.
            let empty: [UInt8] = Array("QTSG".utf8) + [1, 0, 0, 0]
            #expect(QTNamedEvent(type: "T", bytes: empty).signalArguments == [])
            // One string whose offset points past the end, or whose bytes have no NUL.
            var string: [UInt8] = Array("QTSG".utf8) + [1, 1, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
            string += [24, 0, 0, 0, 0, 0, 0, 0] + Array("abc".utf8)
            #expect(QTNamedEvent(type: "T", bytes: string).signalArguments == nil, "no NUL")
            #expect(QTNamedEvent(type: "T", bytes: string + [0]).signalArguments == [.string("abc")])
            string[16] = 200
            #expect(QTNamedEvent(type: "T", bytes: string + [0]).signalArguments == nil, "offset past the end")
            // An unknown kind.
            let kind: [UInt8] =
                Array("QTSG".utf8) + [1, 1, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0] + [UInt8](repeating: 0, count: 8)
            #expect(QTNamedEvent(type: "T", bytes: kind).signalArguments == nil)
        }

        @Test func cEventsWithoutASwiftValueSkipTypedSubscribersThatCannotDecode() {
            struct Opaque: QTEvent { static var eventName: String { "CrossOpaque" } }
            let typed = Counter(), named = Counter()
            let t1 = bus.on(Opaque.self).next { _ in typed.increment() }
            let t2 = bus.on(named: "CrossOpaque").next { _ in named.increment() }
            defer {
                t1.dispose()
                t2.dispose()
            }
            #expect(cpeer_dispatch("CrossOpaque", nil, "bytes") == 2, "both reached (the typed one skips)")
            #expect(typed.value == 0)
            #expect(named.value == 1)
            bus.dispatch(Opaque())
            #expect(typed.value == 1)
            #expect(named.value == 2, "Swift's typed dispatch reaches named subscribers of the name")
        }
    }
}

/// Reads the bytes of a C typed signal by the layout qtbus.h documents ("Typed
/// signals"): what a Swift program receiving one by name does.
private struct SignalArguments {
    let bytes: [UInt8]
    let kinds: [UInt8]
    private let slots: Int

    init?(_ bytes: [UInt8]) {
        guard bytes.count >= 8, Array(bytes[0..<4]) == Array("QTSG".utf8), bytes[4] == 1 else { return nil }
        let count = Int(bytes[5])
        slots = 8 + (count + 7) / 8 * 8
        guard bytes.count >= slots + 8 * count else { return nil }
        self.bytes = bytes
        kinds = Array(bytes[8..<8 + count])
    }

    private func slot(_ i: Int) -> UInt64 {
        (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[slots + 8 * i + $1]) << (8 * $1) }
    }

    func int32(_ i: Int) -> Int32 { Int32(truncatingIfNeeded: slot(i)) }

    func text(_ i: Int) -> String? {
        let offset = Int(slot(i))
        guard offset != 0, let end = bytes[offset...].firstIndex(of: 0) else { return nil }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }
}
