// SPDX-License-Identifier: MIT
// The error rule of the Swift API (QTEventBus.docc/QTEventBus.md, "Errors"), call by
// call: every call that takes a name traps on an invalid one, in a child process here,
// with a message naming the call, the name and the reason in qtbus_errmsg()'s words;
// the other programmer errors trap likewise; what a correct program cannot prevent is
// thrown; results are answers, never refusals.
import QTBusEngine
import QTEventBus
import QTEventBusTestSupport
import Testing

/// An event whose subtype is its tag.
struct Tagged: QTEvent {
    let tag: String
    var eventSubType: String? { tag }
}

/// The same as bytes (the dispatch path of `QTBytesEvent`s).
struct TaggedBytes: QTBytesEvent {
    let tag: String
    var eventSubType: String? { tag }
    var eventBytes: [UInt8] { Array(tag.utf8) }
    init(tag: String) { self.tag = tag }
    init?(eventBytes: UnsafeRawBufferPointer, subType: String?) { tag = subType ?? "" }
}

/// A type whose engine name is not a name.
struct BadlyNamed: QTEvent {
    static var eventName: String { "" }
}

/// 300 bytes: over the limit.
let longName = String(repeating: "y", count: 300)
/// How a message quotes `longName`: its first 48 bytes, then "...".
let longQuoted = "\"" + String(repeating: "y", count: 48) + "...\""
/// A NUL byte inside: a C string would end at it.
let nulName = "a\u{0}b"

/// One programmer error, run in a child process, and the message it must trap with
/// (after "QTEventBus: ").
enum MisuseCase: String, Codable, Sendable, CaseIterable {
    // Subscribing: each call that takes a name checks it; a typed name is checked by
    // each way to finish a maker; the engine's own refusal (too many subtypes) traps too.
    case onNamedEmpty, ofSubTypeEmpty, ofSubTypeLong, ofSubTypeNUL
    case nextBadType, nextOnMainBadType, nextRequestBadType, replyBadType, eventsBadType
    case eventsOfBadSubtype, tooManySubtypes, bufferWithoutQueue, bufferOfZero, onMatchingBadPattern
    // Dispatching, in all its forms.
    case dispatchEmptySubtype, dispatchLongSubtype, dispatchNULSubtype, dispatchStickyLongSubtype
    case dispatchEmptyString, dispatchBadType, dispatchBytesNULSubtype
    case dispatchOnBusQueueLongSubtype, dispatchOnBusQueueNULSubtype, dispatchOnMainEmptySubtype
    case dispatchOnMainStickyBadType
    case dispatchNamedEmptyType, dispatchNamedNULSubtype, dispatchJSONLongName
    // Headers (every form that takes them checks them with the engine's rule).
    case dispatchHeadersQtbusName, dispatchNamedHeadersCRLF, dispatchJSONHeadersEmptyName, requestHeadersNUL
    case requestNamedAwaitedHeadersLongName
    // Requests, both forms, typed and named; cancelled or not.
    case requestEmptySubtype, requestBadType, requestNamedEmptyType
    case requestAwaitedEmptySubtype, requestAwaitedCancelled, requestReplyAsLongSubtype, requestNamedAwaitedNULSubtype
    // Sticky events and counts.
    case removeStickyEmptySubtype, removeStickyBadType, removeStickyNamedEmptyType
    case subscriberCountNULSubtype, subscriberCountNamedLongType
    // Typed signals: kinds that are not the bus's signature, none, another one.
    case signalEmitWrongKinds, signalEmitTooFew, signalEmitUndefined, signalEmitNULString, signalEmitEmptySubtype
    case signalDefineOther, signalDefineTooMany, signalKindsEmptyName
    // Commands, sources, tracing.
    case commandEmptyName, commandWorkEmptyName, sourceNULType, sourceOfBadType, traceUnknownKinds
    // Misuse of an execution or a request context.
    case finishTwice, failAfterFinish, sendAfterFinish, replyAfterTheHandlerReturned
    // A token unblocked more times than blocked.
    case unblockTooMany

    var expected: String {
        let tagged = "QTEventBusTests.Tagged", bad = "QTEventBusTests.BadlyNamed"
        let badType = "the type name \"\" is empty"
        switch self {
        case .onNamedEmpty: return "on(named:): the type name \"\" is empty"
        case .ofSubTypeEmpty: return "ofSubType(_:): the subtype \"\" is empty"
        case .ofSubTypeLong: return "ofSubType(_:): the subtype \(longQuoted) is longer than 255 bytes"
        case .ofSubTypeNUL: return "ofSubType(_:): the subtype \"a\\x00b\" contains a NUL byte"
        case .nextBadType: return "next(_:) of \(bad): \(badType)"
        case .nextOnMainBadType: return "nextOnMain(_:) of \(bad): \(badType)"
        case .nextRequestBadType: return "nextRequest(_:) of \(bad): \(badType)"
        case .replyBadType: return "reply(_:) of \(bad): \(badType)"
        case .eventsBadType: return "events(bufferingPolicy:) of \(bad): \(badType)"
        case .eventsOfBadSubtype:
            return "events(of:subType:bufferingPolicy:) of QTEventBusTests.PingEvent: the subtype \"\" is empty"
        case .bufferWithoutQueue:
            return "next(_:) of \"QTEventBusTests.PingEvent\": buffer(_:whenFull:) without atQueue(_:): "
                + "a delivery on the dispatching thread waits for nothing"
        case .bufferOfZero: return "buffer(_:whenFull:): the capacity 0 is below 1"
        case .onMatchingBadPattern:
            return
                "on(matching:): the pattern \"Order.>.x\" has \">\" before its last token (\">\" matches the rest: only as the last token)"
        case .tooManySubtypes:
            return "next(_:) of \"QTEventBusTests.PingEvent\": options->subtype_count is 4097"
        case .dispatchEmptySubtype: return "dispatch(_:sticky:) of \(tagged): the subtype \"\" is empty"
        case .dispatchLongSubtype, .dispatchStickyLongSubtype:
            return "dispatch(_:sticky:) of \(tagged): the subtype \(longQuoted) is longer than 255 bytes"
        case .dispatchNULSubtype: return "dispatch(_:sticky:) of \(tagged): the subtype \"a\\x00b\" contains a NUL byte"
        case .dispatchEmptyString: return "dispatch(_:sticky:) of Swift.String: the subtype \"\" is empty"
        case .dispatchBadType: return "dispatch(_:sticky:) of \(bad): \(badType)"
        case .dispatchBytesNULSubtype:
            return "dispatch(_:sticky:) of QTEventBusTests.TaggedBytes: the subtype \"a\\x00b\" contains a NUL byte"
        case .dispatchOnBusQueueLongSubtype:
            return "dispatchOnBusQueue(_:sticky:) of \(tagged): the subtype \(longQuoted) is longer than 255 bytes"
        case .dispatchOnBusQueueNULSubtype:
            return "dispatchOnBusQueue(_:sticky:) of \(tagged): the subtype \"a\\x00b\" contains a NUL byte"
        case .dispatchOnMainEmptySubtype: return "dispatchOnMain(_:sticky:) of \(tagged): the subtype \"\" is empty"
        case .dispatchOnMainStickyBadType: return "dispatchOnMain(_:sticky:) of \(bad): \(badType)"
        case .dispatchNamedEmptyType: return "dispatch(named:subType:bytes:sticky:): the type name \"\" is empty"
        case .dispatchNamedNULSubtype:
            return "dispatch(named:subType:bytes:sticky:): the subtype \"a\\x00b\" contains a NUL byte"
        case .dispatchJSONLongName: return "dispatchJSON(name:json:): the name \(longQuoted) is longer than 255 bytes"
        case .dispatchHeadersQtbusName:
            return "dispatch(_:sticky:headers:): the header \"QTBUS-x\": a header's name starts \"Qtbus-\" "
                + "(in some letter case): the NATS bridge's own"
        case .dispatchNamedHeadersCRLF:
            return "dispatch(named:subType:bytes:sticky:headers:): the header \"x-a\": a header's value has a CR or LF"
        case .dispatchJSONHeadersEmptyName:
            return "dispatchJSON(name:json:headers:): the header \"\": a header's name is empty"
        case .requestHeadersNUL: return "request(_:headers:onReply:completion:): the header \"x\" holds a NUL byte"
        case .requestNamedAwaitedHeadersLongName:
            return
                "request(named:subType:bytes:timeout:headers:): the header \"\(String(repeating: "h", count: 65))\": "
                + "a header's name is longer than 64 bytes"
        case .requestEmptySubtype: return "request(_:onReply:completion:) of \(tagged): the subtype \"\" is empty"
        case .requestBadType: return "request(_:onReply:completion:) of \(bad): \(badType)"
        case .requestNamedEmptyType:
            return "request(named:subType:bytes:onReply:completion:): the type name \"\" is empty"
        case .requestAwaitedEmptySubtype, .requestAwaitedCancelled:
            return "request(_:timeout:) of \(tagged): the subtype \"\" is empty"
        case .requestReplyAsLongSubtype:
            return "request(_:replyAs:timeout:) of \(tagged): the subtype \(longQuoted) is longer than 255 bytes"
        case .requestNamedAwaitedNULSubtype:
            return "request(named:subType:bytes:timeout:): the subtype \"a\\x00b\" contains a NUL byte"
        case .removeStickyEmptySubtype:
            return "removeSticky(_:subType:) of QTEventBusTests.PingEvent: the subtype \"\" is empty"
        case .removeStickyBadType: return "removeSticky(_:subType:) of \(bad): \(badType)"
        case .removeStickyNamedEmptyType: return "removeSticky(named:subType:): the type name \"\" is empty"
        case .subscriberCountNULSubtype:
            return
                "subscriberCount(of:subType:) of QTEventBusTests.PingEvent: the subtype \"a\\x00b\" contains a NUL byte"
        case .subscriberCountNamedLongType:
            return "subscriberCount(named:subType:): the type name \(longQuoted) is longer than 255 bytes"
        case .signalEmitWrongKinds:
            return "emitSignal(named:subType:_:): the arguments (string, int64) are not the signature of the type "
                + "\"Login\" on this bus, (string, int32)"
        case .signalEmitTooFew:
            return "emitSignal(named:subType:_:): the arguments (string) are not the signature of the type "
                + "\"Login\" on this bus, (string, int32)"
        case .signalEmitUndefined:
            return "emitSignal(named:subType:_:): the type \"Logout\" has no signature on this bus "
                + "(defineSignal(named:_:), qtbus_signal_define or qtbus::signal)"
        case .signalEmitNULString:
            return "emitSignal(named:subType:_:): argument 1, the string \"a\\x00b\", contains a NUL byte (at byte 1): "
                + "a signal's strings are C strings"
        case .signalEmitEmptySubtype: return "emitSignal(named:subType:_:): the subtype \"\" is empty"
        case .signalDefineOther:
            return "defineSignal(named:_:): the type \"Login\" has another signature on this bus already: "
                + "(string, int32), not (string, int64)"
        case .signalDefineTooMany: return "defineSignal(named:_:): 17 kinds: a signature has at most 16"
        case .signalKindsEmptyName: return "signalKinds(named:): the type name \"\" is empty"
        case .commandEmptyName: return "QTCommand.init(bus:name:concurrent:execute:): the name \"\" is empty"
        case .commandWorkEmptyName: return "QTCommand.init(bus:name:concurrent:work:): the name \"\" is empty"
        case .sourceNULType:
            return "QTSource.init(bus:type:autoconnect:start:stop:): the type name \"a\\x00b\" contains a NUL byte"
        case .sourceOfBadType: return "QTSource.init(bus:of:autoconnect:start:stop:) of \(bad): \(badType)"
        case .traceUnknownKinds: return "setTraceHook(_:_:): unknown bits 0x40000000 in kinds"
        case .finishTwice: return "QTExecution.finish(): the execution has finished already"
        case .failAfterFinish: return "QTExecution.fail(_:): the execution has finished already"
        case .sendAfterFinish: return "QTExecution.send(_:): the execution has finished already"
        case .replyAfterTheHandlerReturned:
            return "QTRequestContext.reply(_:): the handler of the request \"Keep\" has returned"
        case .unblockTooMany: return "QTEventToken.unblock(): the token is not blocked"
        }
    }

    /// Makes the mistake (in the child process, which it ends).
    func run() async throws {
        let bus = QTEventBus()
        switch self {
        case .onNamedEmpty: _ = bus.on(named: "")
        case .ofSubTypeEmpty: _ = bus.on(PingEvent.self).ofSubType("")
        case .ofSubTypeLong: _ = bus.on(PingEvent.self).ofSubType(longName)
        case .ofSubTypeNUL: _ = bus.on(named: "T").ofSubType(nulName)
        case .nextBadType: bus.on(BadlyNamed.self).next { _ in }
        case .nextOnMainBadType: bus.on(BadlyNamed.self).nextOnMain { _ in }
        case .nextRequestBadType: bus.on(BadlyNamed.self).nextRequest { _, _ in }
        case .replyBadType: bus.on(BadlyNamed.self).reply { _ in ["x"] }
        case .eventsBadType: _ = bus.on(BadlyNamed.self).events()
        case .eventsOfBadSubtype: _ = bus.events(of: PingEvent.self, subType: "")
        case .bufferWithoutQueue: bus.on(PingEvent.self).buffer(4, whenFull: .dropOldest).next { _ in }
        case .bufferOfZero: _ = bus.on(PingEvent.self).buffer(0, whenFull: .latest)
        case .onMatchingBadPattern: _ = bus.on(matching: "Order.>.x")
        case .tooManySubtypes:
            var maker = bus.on(PingEvent.self)
            for i in 0...4096 { maker = maker.ofSubType("s\(i)") }
            maker.next { _ in }
        case .dispatchEmptySubtype: bus.dispatch(Tagged(tag: ""))
        case .dispatchLongSubtype: bus.dispatch(Tagged(tag: longName))
        case .dispatchNULSubtype: bus.dispatch(Tagged(tag: nulName))
        case .dispatchStickyLongSubtype: bus.dispatch(Tagged(tag: longName), sticky: true)
        case .dispatchEmptyString: bus.dispatch("")
        case .dispatchBadType: bus.dispatch(BadlyNamed())
        case .dispatchBytesNULSubtype: bus.dispatch(TaggedBytes(tag: nulName))
        case .dispatchOnBusQueueLongSubtype: bus.dispatchOnBusQueue(Tagged(tag: longName))
        case .dispatchOnBusQueueNULSubtype: bus.dispatchOnBusQueue(Tagged(tag: nulName))
        case .dispatchOnMainEmptySubtype: bus.dispatchOnMain(Tagged(tag: ""))
        case .dispatchOnMainStickyBadType: bus.dispatchOnMain(BadlyNamed(), sticky: true)
        case .dispatchNamedEmptyType: bus.dispatch(named: "")
        case .dispatchNamedNULSubtype: bus.dispatch(named: "T", subType: nulName)
        case .dispatchJSONLongName: _ = try bus.dispatchJSON(name: longName, json: "{}")
        case .dispatchHeadersQtbusName: bus.dispatch(PingEvent(n: 1), headers: ["QTBUS-x": "v"])
        case .dispatchNamedHeadersCRLF: bus.dispatch(named: "T", headers: ["x-a": "a\r\nb"])
        case .dispatchJSONHeadersEmptyName: _ = try bus.dispatchJSON(name: "J", json: "{}", headers: ["": "v"])
        case .requestHeadersNUL: bus.request(PingEvent(n: 1), headers: ["x": "a\u{0}b"], onReply: nil)
        case .requestNamedAwaitedHeadersLongName:
            _ = try await bus.request(named: "T", headers: [String(repeating: "h", count: 65): "v"])
        case .requestEmptySubtype: bus.request(Tagged(tag: ""), onReply: nil)
        case .requestBadType: bus.request(BadlyNamed(), onReply: nil)
        case .requestNamedEmptyType: bus.request(named: "", onReply: nil)
        case .requestAwaitedEmptySubtype: _ = try await bus.request(Tagged(tag: ""))
        case .requestAwaitedCancelled:
            // A cancelled task does not hide the mistake (it would otherwise throw
            // CancellationError before looking at the request).
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                _ = try await bus.request(Tagged(tag: ""))
            }
            _ = try await task.value
        case .requestReplyAsLongSubtype: _ = try await bus.request(Tagged(tag: longName), replyAs: String.self)
        case .requestNamedAwaitedNULSubtype: _ = try await bus.request(named: "T", subType: nulName)
        case .removeStickyEmptySubtype: bus.removeSticky(PingEvent.self, subType: "")
        case .removeStickyBadType: bus.removeSticky(BadlyNamed.self)
        case .removeStickyNamedEmptyType: bus.removeSticky(named: "")
        case .subscriberCountNULSubtype: _ = bus.subscriberCount(of: PingEvent.self, subType: nulName)
        case .subscriberCountNamedLongType: _ = bus.subscriberCount(named: longName)
        case .signalEmitWrongKinds, .signalEmitTooFew, .signalEmitNULString, .signalEmitEmptySubtype,
            .signalDefineOther:
            bus.defineSignal(named: "Login", [.string, .int32])
            switch self {
            case .signalEmitWrongKinds: bus.emitSignal(named: "Login", [.string("a"), .int64(1)])
            case .signalEmitTooFew: bus.emitSignal(named: "Login", [.string("a")])
            case .signalEmitNULString: bus.emitSignal(named: "Login", [.string(nulName), .int32(1)])
            case .signalEmitEmptySubtype: bus.emitSignal(named: "Login", subType: "", [.string("a"), .int32(1)])
            default: bus.defineSignal(named: "Login", [.string, .int64])
            }
        case .signalEmitUndefined: bus.emitSignal(named: "Logout", [])
        case .signalDefineTooMany: bus.defineSignal(named: "Many", Array(repeating: .int32, count: 17))
        case .signalKindsEmptyName: _ = bus.signalKinds(named: "")
        case .commandEmptyName: _ = try QTCommand<Void, String>(bus: bus, name: "") { _, e in e.finish() }
        case .commandWorkEmptyName: _ = try QTCommand<Void, String>(bus: bus, name: "", work: { "x" })
        case .sourceNULType: _ = try QTSource(bus: bus, type: nulName, start: { _ in })
        case .sourceOfBadType: _ = try QTSource(bus: bus, of: BadlyNamed.self, start: { _ in })
        case .traceUnknownKinds: try bus.setTraceHook(QTTraceKinds(rawValue: 1 << 30)) { _ in }
        case .finishTwice, .failAfterFinish, .sendAfterFinish:
            let command = try QTCommand<Void, String>(bus: bus, name: "twice") { _, execution in
                execution.finish()
                switch self {
                case .finishTwice: execution.finish()
                case .failAfterFinish: execution.fail("late")
                default: execution.send("late")
                }
            }
            try command.start()
        case .replyAfterTheHandlerReturned:
            let kept = LockedValue<QTRequestContext?>()
            let token = bus.on(named: "Keep").nextRequest { _, request in kept.value = request }
            bus.request(named: "Keep", onReply: nil)
            kept.take()?.reply("late")
            token.dispose()
        case .unblockTooMany:
            let token = bus.on(PingEvent.self).next { _ in }
            try token.block()
            try token.unblock()
            try token.unblock()
        }
    }
}

extension QTBusTests {
    @Suite("Misuse traps, refusals throw")
    struct MisuseTests {
        @Test(arguments: MisuseCase.allCases)
        func programmerErrorsTrapNamingTheCallTheNameAndTheReason(_ misuse: MisuseCase) async throws {
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [misuse] in
                try await misuse.run()
            }
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("QTEventBus: " + misuse.expected), "\(text)")
        }

        /// The reasons the Swift API gives are the engine's, word for word: the same
        /// names given to C calls get the same texts from qtbus_errmsg().
        @Test func theReasonsAreTheEnginesWords() {
            let bus = QTEventBus()
            let names = ["", longName, String(repeating: "\"\\é\t", count: 60), String(repeating: "é", count: 128)]
            for name in names {
                #expect(_qtbus_subscriber_count(bus.cBus, name, nil) < 0)
                #expect(String(cString: _qtbus_errmsg()) == "qtbus_subscriber_count: " + _qtNameProblem(name, .type)!)
                #expect(_qtbus_subscriber_count(bus.cBus, "T", name) < 0)
                #expect(
                    String(cString: _qtbus_errmsg()) == "qtbus_subscriber_count: " + _qtNameProblem(name, .subtype)!)
                #expect(_qtbus_dispatch_json(bus.cBus, name, "{}") < 0)
                #expect(String(cString: _qtbus_errmsg()) == "qtbus_dispatch_json: " + _qtNameProblem(name, .name)!)
            }
            // The one problem only Swift can see: the C string would stop at the NUL.
            #expect(_qtNameProblem(nulName, .subtype) == "the subtype \"a\\x00b\" contains a NUL byte")
        }

        @Test func namesAtTheLimitsAreTaken() async throws {
            let ascii = String(repeating: "n", count: 255)
            let wide = String(repeating: "é", count: 127) + "e"  // 255 bytes of UTF-8
            for name in ["x", ascii, wide] {
                #expect(QTEventBus.isValidName(name))
                let bus = QTEventBus()
                let got = Counter()
                let t1 = bus.on(named: name).ofSubType(name).next { _ in got.increment() }
                let t2 = bus.on(Tagged.self).ofSubType(name).nextRequest { _, request in request.reply("ok") }
                #expect(bus.dispatch(named: name, subType: name, sticky: true) == 1)
                #expect(bus.dispatch(Tagged(tag: name)) == 1)
                #expect(bus.subscriberCount(named: name, subType: name) == 1)
                #expect(bus.subscriberCount(of: Tagged.self, subType: name) == 1)
                #expect(try await bounded { try await bus.request(Tagged(tag: name)) }.map(\.string) == ["ok"])
                #expect(bus.removeSticky(named: name, subType: name) == 1)
                #expect(try bus.dispatchJSON(name: name, json: "[]") == 0)
                _ = try QTCommand<Void, String>(bus: bus, name: name) { _, e in e.finish() }
                _ = try QTSource(bus: bus, type: name, start: { _ in })
                #expect(got.value == 1)
                t1.dispose()
                t2.dispose()
            }
            for name in ["", String(repeating: "n", count: 256), String(repeating: "é", count: 128), nulName, "\u{0}"] {
                #expect(!QTEventBus.isValidName(name), "\(name.utf8.count) bytes")
            }
        }

        /// What a correct program cannot prevent is thrown, with the engine's reason.
        @Test func refusalsAreThrown() async throws {
            let bus = QTEventBus()
            #expect(throws: QTBusError.invalidJSON, "text from outside") { try bus.dispatchJSON(name: "N", json: "{") }

            let held = LockedValue<QTExecution<String>?>()
            let command = try QTCommand<Void, String>(bus: bus, name: "busy") { _, execution in held.value = execution }
            try command.start()
            #expect(throws: QTBusError.busy, "executing, not concurrent") { try command.start() }
            await #expect(throws: QTBusError.busy) { try await command.execute() }
            held.take()?.finish()
            try command.setEnabled(false)
            #expect(throws: QTBusError.busy, "disabled") { try command.start() }
            command.dispose()
            #expect(throws: QTBusError.stale, "disposed") { try command.start() }
            #expect(throws: QTBusError.stale) { try command.setEnabled(true) }
            await #expect(throws: QTBusError.stale) { try await command.execute() }
            command.dispose()  // again: ended already, which is what was asked

            let source = try QTSource(bus: bus, type: "Feed", start: { _ in })
            source.dispose()
            #expect(throws: QTBusError.stale) { try source.connect() }
            #expect(throws: QTBusError.stale) { try source.disconnect() }
        }

        /// Results are answers: counts (never negative), and the benign `false`s of a
        /// reply nobody asked for and of an execution whose command is gone.
        @Test func resultsAreAnswersNotRefusals() async throws {
            let bus = QTEventBus()
            #expect(bus.dispatch(Tagged(tag: "nobody")) == 0)
            #expect(bus.dispatchOnBusQueue(Tagged(tag: "later")) == 0)
            #expect(bus.removeSticky(Tagged.self) == 0)
            #expect(bus.request(Tagged(tag: "nobody"), onReply: nil) == 0)
            // The bus queue resolves its subscribers when it runs: let "later" go before
            // the subscription below exists, or it may reach it.
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))

            let answered = Recorder<Bool>()
            let token = bus.on(Tagged.self).nextRequest { _, request in answered.append(request.reply("x")) }
            bus.dispatch(Tagged(tag: "plain"))
            bus.request(Tagged(tag: "asked"), onReply: nil)
            #expect(answered.values == [false, true], "a plain dispatch asked nothing; a request did")
            token.dispose()
            token.dispose()  // ended already: not a refusal

            let kept = LockedValue<QTExecution<String>?>()
            let command = try QTCommand<Void, String>(bus: bus, name: "gone") { _, execution in kept.value = execution }
            let waiting = Task { try await command.execute() }
            #expect(waitUntil { kept.value != nil })
            command.dispose()
            let execution = try #require(kept.take())
            #expect(!execution.send("late"), "the command is gone: the value goes nowhere")
            #expect(!execution.finish())
            await #expect(throws: QTBusError.stale, "the refusal is reported where it is awaited") {
                try await bounded { try await waiting.value }
            }
        }
    }
}
