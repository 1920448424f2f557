// SPDX-License-Identifier: MIT
// Typed signals from Swift: defineSignal(named:_:), signalKinds(named:) and
// emitSignal(named:subType:_:), on the events C's qtbus_signal_* and C++'s qtbus::signal
// use. The misuse cases (kinds that are not the signature's, a type with no signature,
// another signature, a NUL in a string) trap: MisuseTests.swift runs them.
//
// One emission reaching every language. The test below connects, on qtbus_shared(), a
// C handler with qtbus_signal_connect and a plain C handler reading qtbus_event_args
// (Tests/QTEventBusCTestSupport/sigpeer.c, C), a C++ slot through qtbus::signal
// (sigpeer_cxx.cpp, C++ compiled by SwiftPM in the same test-support target, reached
// through its extern "C" functions, since Swift does not call qtbus.hpp's templates)
// and a Swift on(named:) subscriber; then Swift, C and C++ each emit once, and each
// emission must reach all four, in subscription order. The C++ tests
// (CxxTests/cxx_signal_c.cpp) cover the same from C++'s side with a compiler that
// builds only C and C++.
import Dispatch
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport
import Testing

/// The signal peer's log (sigpeer.h): "who(text,number)" per delivery, in order.
private func sigpeerLog() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    _ = sigpeer_log(&buffer, buffer.count)
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

extension QTBusTests {
    @Suite("Typed signals from Swift")
    struct SignalTests {
        @Test func everyKindRoundTrips() {
            let bus = QTEventBus()
            let kinds: [QTSignalKind] = [.int32, .uint32, .int64, .uint64, .double, .string, .string, .pointer]
            bus.defineSignal(named: "Every", kinds)
            #expect(bus.signalKinds(named: "Every") == kinds)
            let got = Recorder<[QTSignalArgument]?>()
            let token = bus.on(named: "Every").next { got.append($0.signalArguments) }
            defer { token.dispose() }
            let args: [QTSignalArgument] = [
                .int32(-7), .uint32(.max), .int64(.min), .uint64(.max), .double(-2.5),
                .string("h\u{e9}llo"), .string(nil), .pointer(0x1234),
            ]
            #expect(args.map(\.kind) == kinds)
            #expect(bus.emitSignal(named: "Every", args) == 1)
            #expect(got.values == [args])
        }

        @Test func definingAgainAndTheKindsOfAType() {
            let bus = QTEventBus()
            #expect(bus.signalKinds(named: "Login") == nil, "never defined")
            bus.defineSignal(named: "Login", [.string, .int32])
            bus.defineSignal(named: "Login", [.string, .int32])  // the same: nothing to do
            #expect(bus.signalKinds(named: "Login") == [.string, .int32])
            bus.defineSignal(named: "Nothing", [])
            #expect(bus.signalKinds(named: "Nothing") == [])
            #expect(bus.emitSignal(named: "Nothing", []) == 0, "nobody subscribes")
            #expect(QTEventBus().signalKinds(named: "Login") == nil, "a signature is per bus")
            #expect(QTSignalKind.allCases.map(\.rawValue) == Array(1...7), "qtbus_arg's values")
            #expect(
                QTSignalKind.allCases.map(\.description)
                    == ["int32", "uint32", "int64", "uint64", "double", "string", "pointer"])
        }

        @Test func subtypesQueuesAndOtherSubscribers() {
            let bus = QTEventBus()
            bus.defineSignal(named: "Price", [.string, .double])
            let all = Recorder<String>(), eur = Recorder<String>(), queued = Recorder<[QTSignalArgument]?>()
            let queue = DispatchQueue(label: "signals")
            let t1 = bus.on(named: "Price").next { all.append($0.subType ?? "-") }
            let t2 = bus.on(named: "Price").ofSubType("EUR").next { eur.append($0.subType ?? "-") }
            let t3 = bus.on(named: "Price").atQueue(queue).next { queued.append($0.signalArguments) }
            defer {
                t1.dispose()
                t2.dispose()
                t3.dispose()
            }
            #expect(bus.emitSignal(named: "Price", subType: "EUR", [.string("ACME"), .double(1.5)]) == 3)
            #expect(bus.emitSignal(named: "Price", [.string("ACME"), .double(2)]) == 2)
            #expect(all.values == ["EUR", "-"])
            #expect(eur.values == ["EUR"])
            // The queued deliveries read the engine's copy of the bytes, after the emit.
            #expect(waitUntil { queued.count == 2 })
            #expect(queued.values == [[.string("ACME"), .double(1.5)], [.string("ACME"), .double(2)]])
        }

        /// A C signature checks Swift's emit, and a C handler connected with
        /// qtbus_signal_connect takes Swift's arguments as its parameters.
        @Test func swiftEmitsWhatCDefined() {
            #expect(cpeer_signal_define_text_int("SigFromC") == 0)
            #expect(QTEventBus.shared.signalKinds(named: "SigFromC") == [.string, .int32])
            #expect(sigpeer_c_connect("SigFromC") == 0)
            defer { sigpeer_stop() }
            #expect(QTEventBus.shared.emitSignal(named: "SigFromC", [.string(nil), .int32(.min)]) == 1)
            #expect(QTEventBus.shared.emitSignal(named: "SigFromC", [.string("bob"), .int32(2)]) == 1)
            #expect(sigpeerLog() == "c-typed(NULL,-2147483648)c-typed(bob,2)")
        }

        @Test func oneEmissionReachesCCxxAndSwift() {
            let bus = QTEventBus.shared, type = "SigEveryLanguage"
            bus.defineSignal(named: type, [.string, .int32])  // C and C++ check it
            #expect(sigpeer_c_connect(type) == 0)
            #expect(sigpeer_c_listen_args(type) == 0)
            #expect(sigpeer_cxx_connect(type) == 0)
            let token = bus.on(named: type).next { event in
                let args = event.signalArguments ?? []
                guard args.count == 2, case .string(let text) = args[0], case .int32(let number) = args[1] else {
                    return sigpeer_record("swift", "not a signal", 0)
                }
                sigpeer_record("swift", text, number)
            }
            defer {
                token.dispose()
                sigpeer_stop()
            }
            let reached = [
                bus.emitSignal(named: type, subType: "swift", [.string("from Swift"), .int32(1)]),
                Int(sigpeer_c_emit(type, "c", "from C", 2)),
                Int(sigpeer_cxx_emit(type, "c++", "from C++", 3)),
            ]
            let log = sigpeerLog()
            for line in log.split(separator: ")") { print("signal delivery: \(line))") }
            #expect(reached == [4, 4, 4])
            let receivers = ["c-typed", "c-plain", "c++", "swift"]
            let expected = [("from Swift", 1), ("from C", 2), ("from C++", 3)]
                .map { text, n in receivers.map { "\($0)(\(text),\(n))" }.joined() }.joined()
            #expect(log == expected)
        }

        /// Bytes that are not this signature's (a plain dispatch of the type) reach
        /// the plain subscribers only: the typed ones (C's and C++'s) skip them.
        @Test func aPlainDispatchOfTheTypeSkipsTheTypedReceivers() {
            let bus = QTEventBus.shared, type = "SigPlain"
            bus.defineSignal(named: type, [.string, .int32])
            #expect(sigpeer_c_connect(type) == 0)
            #expect(sigpeer_cxx_connect(type) == 0)
            #expect(sigpeer_c_listen_args(type) == 0)
            defer { sigpeer_stop() }
            #expect(bus.dispatch(named: type, bytes: Array("QTSG not really".utf8)) == 3)
            #expect(sigpeerLog() == "c-plain(not a (string, int32) signal: -1,0)")
        }
    }
}
