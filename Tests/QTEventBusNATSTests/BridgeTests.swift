// SPDX-License-Identifier: MIT
// QTNATSBridge against a real nats-server (NATSServer.swift): two buses, each with its
// own bridge, as two processes would be -- named, pattern, subtype, JSON and typed
// events crossing to Swift subscribers; a sticky event kept by JetStream for a later
// import; undoing exports and imports; stats; close, and close(timeout:) with the
// server gone (within the time, .timedOut);
// connecting with nats.c's options or over an application's connection; and failures
// thrown with qtbus_errmsg()'s words.
import CNATS
import Foundation
import QTEventBus
import QTEventBusFoundation
import QTEventBusNATS
import QTEventBusTestSupport
import Testing

/// A typed Swift event that crosses as its bytes (QTBytesEvent) under a named type.
struct PriceEvent: QTBytesEvent, Equatable {
    static var eventName: String { "Price" }
    let currency: String
    let cents: Int
    var eventSubType: String? { currency }
    var eventBytes: [UInt8] { Array(String(cents).utf8) }
    init(currency: String, cents: Int) {
        self.currency = currency
        self.cents = cents
    }
    init?(eventBytes: UnsafeRawBufferPointer, subType: String?) {
        guard let subType, let cents = Int(String(decoding: eventBytes, as: UTF8.self)) else { return nil }
        self.init(currency: subType, cents: cents)
    }
}

/// Two buses bridged to one server: `a` and `b`, as two processes.
struct Pair {
    let server: NATSServer
    let busA = QTEventBus()
    let busB = QTEventBus()
    let a: QTNATSBridge
    let b: QTNATSBridge

    init(jetstream: Bool = false) async throws {
        server = try NATSServer(jetstream: jetstream)
        a = try await QTNATSBridge(bus: busA, url: server.url)
        b = try await QTNATSBridge(bus: busB, url: server.url)
    }

    func close() async throws {
        try await a.close()
        try await b.close()
        server.stop()
    }
}

/// "type/subtype:text" of a named event.
func line(_ event: QTNamedEvent) -> String {
    event.type + (event.subType.map { "/" + $0 } ?? "") + ":" + event.text
}

extension QTBusTests {
    @Suite("NATS bridge")
    struct NATSBridgeTests {
        @Test func anExportedEventReachesAnOnNamedSubscriberOfTheOtherBus() async throws {
            let pair = try await Pair()
            let got = Recorder<String>()
            let token = pair.busB.on(named: "Login").next { got.append(line($0)) }
            pair.a.export(named: "Login")
            try await pair.b.import(named: "Login")

            #expect(pair.busA.dispatch(named: "Login", subType: "alice", bytes: Array("hello".utf8)) == 1)
            #expect(waitUntil { got.count == 1 })
            #expect(got.values == ["Login/alice:hello"])
            #expect(pair.a.stats.published == 1)
            #expect(pair.b.stats.received == 1)
            #expect(pair.a.stats.dropped == 0 && pair.b.stats.dropped == 0)
            #expect(pair.a.isConnected && pair.b.isConnected)
            token.dispose()
            try await pair.close()
        }

        @Test func importMatchingReceivesOrderCreated() async throws {
            let pair = try await Pair()
            let named = Recorder<String>()
            let matched = Recorder<String>()
            let t1 = pair.busB.on(named: "Order.created").next { named.append(line($0)) }
            let t2 = pair.busB.on(matching: ">").next { matched.append(line($0)) }
            pair.a.export(matching: "Order.>")
            pair.a.export(named: "Invoice.sent")
            try await pair.b.import(matching: "Order.>")

            pair.busA.dispatch(named: "Order.created", bytes: Array("{\"id\":1}".utf8))
            pair.busA.dispatch(named: "Invoice.sent", bytes: Array("{}".utf8))  // published, not imported
            pair.busA.dispatch(named: "Order.paid", bytes: Array("{\"id\":1}".utf8))
            #expect(waitUntil { matched.count == 2 })
            #expect(named.values == ["Order.created:{\"id\":1}"])
            #expect(matched.values == ["Order.created:{\"id\":1}", "Order.paid:{\"id\":1}"])  // one import: in order
            #expect(pair.a.stats.published == 3)
            #expect(pair.b.stats.received == 2)
            t1.dispose()
            t2.dispose()
            try await pair.close()
        }

        @Test func subtypesJSONAndTypedEventsCross() async throws {
            let pair = try await Pair()
            let json = Recorder<String>()
            let prices = Recorder<PriceEvent>()
            let t1 = pair.busB.on(QTJsonEvent.self).next {
                json.append($0.uniqueId + ":" + String(decoding: $0.data, as: UTF8.self))
            }
            let t2 = pair.busB.on(PriceEvent.self).next { prices.append($0) }
            pair.a.export(named: QTEventBus.jsonTypeName)
            pair.a.export(named: PriceEvent.eventName)
            try await pair.b.import(named: QTEventBus.jsonTypeName, subType: "profile")
            try await pair.b.import(named: PriceEvent.eventName)

            #expect(try pair.busA.dispatchJSON(name: "other", json: "[1]") == 1)  // not this subtype
            #expect(try pair.busA.dispatchJSON(name: "profile", json: "{\"name\":\"alice\"}") == 1)
            pair.busA.dispatch(PriceEvent(currency: "eur", cents: 250))
            #expect(waitUntil { json.count == 1 && prices.count == 1 })
            #expect(json.values == ["profile:{\"name\":\"alice\"}"])
            #expect(prices.values == [PriceEvent(currency: "eur", cents: 250)])
            #expect(pair.b.stats.received == 2)  // the server filtered "other" out
            t1.dispose()
            t2.dispose()
            try await pair.close()
        }

        @Test func undoingReturnsWhetherThereWasSomethingToUndo() async throws {
            let pair = try await Pair()
            let got = Recorder<String>()
            let token = pair.busB.on(matching: ">").next { got.append(line($0)) }
            pair.a.export(named: "Tick")
            pair.a.export(matching: "Order.*")
            pair.a.export(named: "Sync")
            try await pair.b.import(named: "Tick")
            try await pair.b.import(named: "Tick", subType: "fast")
            try await pair.b.import(matching: "Order.*")
            try await pair.b.import(named: "Sync")

            #expect(pair.a.unexport(named: "Tick"))
            #expect(!pair.a.unexport(named: "Tick"))
            #expect(!pair.a.unexport(named: "Never"))
            #expect(pair.a.unexport(matching: "Order.*"))
            #expect(!pair.a.unexport(matching: "Order.*"))
            #expect(await pair.b.unimport(named: "Tick"))
            #expect(await !pair.b.unimport(named: "Tick"))
            #expect(await pair.b.unimport(named: "Tick", subType: "fast"))
            #expect(await !pair.b.unimport(named: "Tick", subType: "fast"))
            #expect(await pair.b.unimport(matching: "Order.*"))
            #expect(await !pair.b.unimport(matching: "Order.*"))

            pair.busA.dispatch(named: "Tick", subType: "fast")  // no longer exported
            pair.busA.dispatch(named: "Order.created")  // no longer exported
            pair.busA.dispatch(named: "Sync")
            #expect(waitUntil { got.count >= 1 })
            #expect(got.values == ["Sync:"])
            #expect(pair.a.stats.published == 1)
            token.dispose()
            try await pair.close()
        }

        @Test func closeFlushesDispatchesAndEnds() async throws {
            let pair = try await Pair()
            let got = Recorder<String>()
            let token = pair.busB.on(named: "Order.created").next { got.append(line($0)) }
            pair.a.export(named: "Order.created")
            try await pair.b.import(named: "Order.created")
            for id in 1...100 { pair.busA.dispatch(named: "Order.created", bytes: Array(String(id).utf8)) }
            try await pair.a.close()  // flushes: every order has left
            #expect(waitUntil { got.count == 100 })
            try await pair.b.close()  // what it had received is dispatched
            #expect(got.count == 100)

            // Closed: counts kept, nothing connected, nothing left to undo; closing again
            // does nothing.
            #expect(pair.a.stats.published == 100)
            #expect(pair.b.stats.received == 100)
            #expect(!pair.a.isConnected)
            #expect(!pair.a.unexport(named: "Order.created"))
            #expect(await !pair.b.unimport(named: "Order.created"))
            try await pair.a.close()
            // The export's subscription ended with the bridge.
            #expect(pair.busA.subscriberCount(named: "Order.created") == 0)
            token.dispose()
            pair.server.stop()
        }

        @Test func closeWithATimeoutEndsWithinIt() async throws {
            // The server gone, an event in the reconnect buffer: close() would take 8 s.
            let server = try NATSServer()
            let bus = QTEventBus()
            let bridge = try await QTNATSBridge(bus: bus, url: server.url)
            bridge.export(named: "Gone")
            server.stop()
            #expect(waitUntil { !bridge.isConnected })
            #expect(bus.dispatch(named: "Gone", bytes: Array("x".utf8)) == 1)
            let clock = ContinuousClock()
            let start = clock.now
            do {
                try await bridge.close(timeout: .milliseconds(300))
                Issue.record("a close that dropped the reconnect buffer did not throw")
            } catch {
                #expect(error == .timedOut)
                #expect(
                    error.message.hasPrefix("qtbus_nats_close_timeout: the timeout (300 ms) cut the close short: "),
                    "\(error.message)")
            }
            let took = clock.now - start
            #expect(took >= .milliseconds(290) && took < .milliseconds(800), "\(took)")
            #expect(!bridge.isConnected)
            try await bridge.close(timeout: .zero)  // closed: nothing to do

            // The server up, nothing left behind: no error, at once too.
            let up = try NATSServer()
            let fine = try await QTNATSBridge(bus: bus, url: up.url)
            fine.export(named: "Fine")
            bus.dispatch(named: "Fine", bytes: Array("y".utf8))
            try await fine.close(timeout: .seconds(2))
            let atOnce = try await QTNATSBridge(bus: bus, url: up.url)
            try await atOnce.close(timeout: .milliseconds(-5))  // a time already past: at once
            up.stop()
        }

        @Test func jetstreamKeepsAStickyEventForALaterImport() async throws {
            let server = try NATSServer(jetstream: true)
            let here = QTEventBus()
            let later = QTEventBus()
            let out = try await QTNATSBridge(bus: here, url: server.url, prefix: "swift.js", jetstream: true)
            out.export(named: "Config")
            here.dispatch(named: "Config", subType: "eu", bytes: Array("v1".utf8), sticky: true)
            try await out.close()  // flushed: the stream has it

            let got = Recorder<String>()
            let token = later.on(named: "Config").next { got.append(line($0)) }
            let late = try await QTNATSBridge(bus: later, url: server.url, prefix: "swift.js", jetstream: true)
            try await late.import(named: "Config")
            #expect(waitUntil { got.count == 1 })
            #expect(got.values == ["Config/eu:v1"])
            try await late.close()
            token.dispose()
            server.stop()
        }

        @Test func aBridgeReleasedWithoutCloseClosesInTheBackground() async throws {
            let server = try NATSServer()
            let bus = QTEventBus()
            var bridge: QTNATSBridge? = try await QTNATSBridge(bus: bus, url: server.url)
            bridge?.export(named: "T")
            #expect(bus.subscriberCount(named: "T") == 1)
            bridge = nil
            #expect(waitUntil { bus.subscriberCount(named: "T") == 0 })
            server.stop()
        }

        @Test func aBadURLThrowsWithAMessageNamingIt() async throws {
            let closedPort = try NATSServer.freePort()
            let url = "nats://127.0.0.1:\(closedPort)"
            do {
                _ = try await QTNATSBridge(bus: QTEventBus(), url: url)
                Issue.record("connected to \(url)")
            } catch {
                #expect(error == .io)
                #expect(error.message.hasPrefix("qtbus_nats_connect: no server at \(url) could be reached"), "\(error)")
            }

            // A password never shows.
            let secret = "nats://user:s3cret@127.0.0.1:\(closedPort)"
            let masked = await #expect(throws: QTBusError.io) { try await QTNATSBridge(url: secret) }
            #expect(
                masked?.message.contains("user:***@127.0.0.1:\(closedPort)") == true, "\(String(describing: masked))")
            #expect(masked?.message.contains("s3cret") == false)

            // Connecting throws every refusal, .invalidArgument included: a url or a prefix
            // comes from a configuration.
            let blank = await #expect(throws: QTBusError.invalidArgument) { try await QTNATSBridge(url: " , ") }
            #expect(blank?.message.contains("lists no server") == true)
            let nul = await #expect(throws: QTBusError.invalidArgument) {
                try await QTNATSBridge(url: "nats://a\u{0}b")
            }
            #expect(
                nul?.message
                    == "QTNATSBridge(bus:url:prefix:jetstream:requestTimeout:): the url holds a NUL byte (at byte 8)")
            let server = try NATSServer()
            let prefix = await #expect(throws: QTBusError.invalidArgument) {
                try await QTNATSBridge(url: server.url, prefix: "a.*")
            }
            #expect(prefix?.message.hasPrefix("qtbus_nats_connect: options->prefix is not a NATS subject") == true)
            await #expect(throws: QTBusError.invalidArgument) {
                try await QTNATSBridge(url: server.url, requestTimeout: .milliseconds(-5))
            }
            server.stop()
        }

        @Test func connectWithNATSOptionsAndAttachToAConnection() async throws {
            let server = try NATSServer()
            let busA = QTEventBus()
            let busB = QTEventBus()
            let got = Recorder<String>()
            let token = busB.on(named: "Tick").next { got.append(line($0)) }

            // nats.c's options, the caller's to destroy once the bridge is made.
            var options: OpaquePointer?
            #expect(natsOptions_Create(&options) == NATS_OK)
            #expect(natsOptions_SetURL(options, server.url) == NATS_OK)
            #expect(natsOptions_SetName(options, "swift-test") == NATS_OK)
            let a = try await QTNATSBridge(bus: busA, natsOptions: try #require(options), prefix: "acme.test")
            natsOptions_Destroy(options)

            // The application's connection: the bridge never closes it.
            var connection: OpaquePointer?
            #expect(natsConnection_ConnectTo(&connection, server.url) == NATS_OK)
            let b = try await QTNATSBridge(bus: busB, attaching: try #require(connection), prefix: "acme.test")
            a.export(named: "Tick")
            try await b.import(named: "Tick")
            busA.dispatch(named: "Tick", bytes: Array("1".utf8))
            #expect(waitUntil { got.count == 1 })
            #expect(got.values == ["Tick:1"])
            try await b.close()
            #expect(!natsConnection_IsClosed(connection))
            natsConnection_Destroy(connection)
            try await a.close()
            token.dispose()
            server.stop()
        }

        @Test(arguments: NATSMisuse.allCases)
        func programmerErrorsTrapNamingTheCallTheNameAndTheReason(_ misuse: NATSMisuse) async throws {
            let server = try NATSServer()
            let url: String = server.url
            let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                [misuse, url = url as String] in
                try await misuse.run(url: url)
            }
            let text = String(decoding: result.standardErrorContent, as: UTF8.self)
            #expect(text.contains("QTEventBus: " + misuse.expected), "\(text)")
            server.stop()
        }
    }
}

/// One programmer error of the bridge's API, run in a child process, and the message it
/// must trap with (after "QTEventBus: ").
enum NATSMisuse: String, Codable, Sendable, CaseIterable {
    case exportEmptyName, exportPattern, importMatchingBadPattern, importNULSubtype, exportAfterClose
    case importAfterClose, unimportLongName

    var expected: String {
        switch self {
        case .exportEmptyName: return "QTNATSBridge.export(named:): the type name \"\" is empty"
        case .exportPattern:
            return
                "QTNATSBridge.export(named:): the type name \"Order.>\" is a pattern: use QTNATSBridge.export(matching:)"
        case .importMatchingBadPattern: return "QTNATSBridge.import(matching:): the pattern \"Order.>.x\""
        case .importNULSubtype:
            return "QTNATSBridge.import(named:subType:): the subtype \"a\\x00b\" contains a NUL byte"
        case .exportAfterClose: return "QTNATSBridge.export(named:): the bridge is closed"
        case .importAfterClose: return "QTNATSBridge.import(matching:): the bridge is closed"
        case .unimportLongName:
            return
                "QTNATSBridge.unimport(named:): the type name \"\(String(repeating: "y", count: 48))...\" is longer than 255 bytes"
        }
    }

    func run(url: String) async throws {
        let bridge = try await QTNATSBridge(bus: QTEventBus(), url: url)
        switch self {
        case .exportEmptyName: bridge.export(named: "")
        case .exportPattern: bridge.export(named: "Order.>")
        case .importMatchingBadPattern: try await bridge.import(matching: "Order.>.x")
        case .importNULSubtype: try await bridge.import(named: "T", subType: "a\u{0}b")
        case .exportAfterClose:
            try await bridge.close()
            bridge.export(named: "T")
        case .importAfterClose:
            try await bridge.close()
            try await bridge.import(matching: "T.>")
        case .unimportLongName: await bridge.unimport(named: String(repeating: "y", count: 300))
        }
    }
}
