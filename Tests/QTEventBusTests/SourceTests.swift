// SPDX-License-Identifier: MIT
// QTSource (RACMulticastConnection): started once for any number of subscribers,
// reconnect after disconnect, autoconnect (start, stop, restart), C subscribers driving
// a Swift source, and disposal on deinit.
import Dispatch
import QTBusEngine
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport
import Testing

/// What a source's side effect dispatches.
struct Tick: QTEvent, Equatable {
    let n: Int
}

/// Counts a source's starts and stops, and checks they alternate.
final class SideEffect: @unchecked Sendable {
    let starts = Counter(), stops = Counter()
    private let lock = TestLock()
    private var running = false
    private(set) var overlaps = 0

    func start() {
        lock.withLock {
            if running { overlaps += 1 }
            running = true
        }
        starts.increment()
    }

    func stop() {
        lock.withLock {
            if !running { overlaps += 1 }
            running = false
        }
        stops.increment()
    }

    var alternated: Bool { lock.withLock { overlaps == 0 } }
}

extension QTBusTests {
    @Suite("Sources")
    struct SourceTests {

        @Test func startedOnceForTwoSubscribers() throws {
            let bus = QTEventBus()
            let effect = SideEffect()
            let source = try QTSource(
                bus: bus, of: Tick.self, autoconnect: true,
                start: { bus in
                    effect.start()
                    bus.dispatch(Tick(n: 1), sticky: true)
                },
                stop: { effect.stop() })
            #expect(source.isAutoconnect)
            #expect(effect.starts.value == 0, "nobody subscribes yet")
            let first = Recorder<Int>(), second = Recorder<Int>()
            let t1 = bus.on(Tick.self).replay().next { first.append($0.n) }
            #expect(effect.starts.value == 1, "the first subscriber connected it, inside subscribe")
            #expect(first.values == [1], "connected before its replay: it got what start dispatched")
            let t2 = bus.on(Tick.self).next { second.append($0.n) }
            #expect(effect.starts.value == 1, "the side effect runs once for two subscribers")
            bus.dispatch(Tick(n: 2))
            #expect(first.values == [1, 2])
            #expect(second.values == [2])
            t1.dispose()
            #expect(effect.stops.value == 0, "one subscriber is left")
            t2.dispose()
            #expect(effect.stops.value == 1, "the last one's dispose disconnected it")
            #expect(effect.alternated)
        }

        @Test func explicitConnectStartsOnceAndReconnectsAfterDisconnect() throws {
            let bus = QTEventBus()
            let effect = SideEffect()
            let source = try QTSource(bus: bus, type: "Clock", start: { _ in effect.start() }, stop: { effect.stop() })
            #expect(!source.isAutoconnect)
            let token = bus.on(named: "Clock").next { _ in }
            #expect(effect.starts.value == 0, "not autoconnect: subscribers do not start it")
            try source.connect()
            try source.connect()
            #expect(effect.starts.value == 1, "further connects do nothing")
            try source.disconnect()
            try source.disconnect()
            #expect(effect.stops.value == 1)
            try source.connect()
            #expect(effect.starts.value == 2, "reconnect after disconnect starts it again")
            source.dispose()
            #expect(effect.stops.value == 2, "disposing a connected source stops it")
            #expect(throws: QTBusError.stale, "disposed") { try source.connect() }
            #expect(throws: QTBusError.stale) { try source.disconnect() }
            source.dispose()  // again: it had ended, which is what was asked
            #expect(effect.starts.value == 2)
            #expect(effect.alternated)
            token.dispose()
        }

        @Test func autoconnectStartStopRestart() throws {
            let bus = QTEventBus()
            let effect = SideEffect()
            let source = try QTSource(
                bus: bus, type: "Feed", autoconnect: true,
                start: { _ in effect.start() }, stop: { effect.stop() })
            for round in 1...3 {
                let token = bus.on(named: "Feed").ofSubType("any").atQueue(DispatchQueue(label: "test.feed")).next {
                    _ in
                }
                #expect(effect.starts.value == round, "round \(round): the first subscriber starts it")
                token.dispose()
                #expect(effect.stops.value == round, "round \(round): the last one stops it")
            }
            let once = bus.on(named: "Feed").once().next { _ in }
            #expect(effect.starts.value == 4)
            bus.dispatch(named: "Feed")
            #expect(!once.isActive)
            #expect(effect.stops.value == 4, "a ONCE subscription that fired is the end of the last one")
            #expect(effect.alternated)
            source.dispose()
            #expect(effect.stops.value == 4, "disposing a disconnected source runs no stop")
        }

        @Test func autoconnectWithSubscribersAlreadyThere() throws {
            let bus = QTEventBus()
            let token = bus.on(Tick.self).next { _ in }
            let effect = SideEffect()
            let source = try QTSource(
                bus: bus, of: Tick.self, autoconnect: true,
                start: { _ in effect.start() }, stop: { effect.stop() })
            #expect(effect.starts.value == 1, "connected at once inside init")
            token.dispose()
            #expect(effect.stops.value == 1)
            source.dispose()
        }

        @Test func cSubscribersDriveASwiftSource() throws {
            let effect = SideEffect()
            let source = try QTSource(
                type: "CFeed", autoconnect: true,
                start: { bus in
                    effect.start()
                    bus.dispatch(named: "CFeed", bytes: Array("hi".utf8))
                },
                stop: { effect.stop() })
            defer { source.dispose() }
            let c = CReceived(slot: cpeer_listen("CFeed", nil))
            #expect(effect.starts.value == 1, "a C qtbus_subscribe connects a Swift source")
            c.stop()
            #expect(effect.stops.value == 1)
            #expect(cpeer_source_connect(source.id) == 0, "C connects it by id")
            #expect(effect.starts.value == 2)
        }

        @Test func deinitDisposesAndReleasesTheClosures() throws {
            let bus = QTEventBus()
            let effect = SideEffect()
            weak var watched: Token?
            do {
                let captured = Token()
                watched = captured
                let source = try QTSource(
                    bus: bus, type: "Temp",
                    start: { _ in
                        _ = captured
                        effect.start()
                    },
                    stop: { effect.stop() })
                try source.connect()
                #expect(effect.starts.value == 1)
            }
            #expect(effect.stops.value == 1, "deinit disconnected it")
            #expect(watched == nil, "and released its closures")
        }
    }
}
