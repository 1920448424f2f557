// SPDX-License-Identifier: MIT
// A synchronous typed dispatch finds its type with one lookup, the engine's: the bus
// keeps the handle of each Swift type dispatched on it, registered by the type's first
// dispatch there (Delivery/_Send.swift, the engine's TypeIds.swift). What a user relies on
// around it: every type reaches its own subscribers and no other, on every bus (handles
// are per bus), however many types a bus has (its table grows while others read it),
// when many threads dispatch types for the first time at once, and named and
// no-subscriber deliveries see the same event as a dispatch by name.
import QTEventBusTestSupport
import QTEventBus
import Testing

/// Event types made from one generic: `Level<Level<Ground>>` is level 2.
protocol Leveled { static var level: Int { get } }
protocol LevelEvent: QTEvent { init(value: Int) }
enum Ground: Leveled { static var level: Int { 0 } }
struct Level<Below: Leveled>: LevelEvent, Leveled {
    static var level: Int { Below.level + 1 }
    static var eventName: String { "TypeIdTests.Level\(level)" }
    let value: Int
}

/// Calls `body` with levels 1 ... `count` (distinct Swift types, distinct engine names).
private func forEachLevel(_ count: Int, _ body: (any LevelEvent.Type) -> Void) {
    func walk<T: Leveled>(_: T.Type, _ left: Int) {
        guard left > 0 else { return }
        body(Level<T>.self)
        walk(Level<T>.self, left - 1)
    }
    walk(Ground.self, count)
}

private func subscribe<E: LevelEvent>(_: E.Type, on bus: QTEventBus, _ seen: Recorder<String>) -> QTEventToken {
    bus.on(E.self).next { _ in seen.append(E.eventName) }
}

private func dispatchLevel<E: LevelEvent>(_: E.Type, on bus: QTEventBus, value: Int) -> Int {
    bus.dispatch(E(value: value))
}

/// Two Swift types with one engine name: a plain one and a bytes one (one byte).
private struct SharedPlain: QTEvent {
    static var eventName: String { "TypeIdTests.Shared" }
    let n: Int
}

private struct SharedBytes: QTBytesEvent {
    static var eventName: String { "TypeIdTests.Shared" }
    let n: UInt8
    init(n: UInt8) { self.n = n }
    var eventBytes: [UInt8] { [n] }
    init?(eventBytes: UnsafeRawBufferPointer, subType: String?) {
        guard eventBytes.count == 1 else { return nil }
        n = eventBytes[0]
    }
}

extension QTBusTests {
    @Suite("Type ids")
    struct TypeIdTests {
        /// 300 types on two buses (each bus's table grows five times); each reaches its
        /// own subscriber, once a dispatch, on its own bus.
        @Test func everyTypeReachesItsOwnSubscribersOnEveryBus() {
            let buses = [QTEventBus(), QTEventBus()]
            let seen = buses.map { _ in Recorder<String>() }
            var tokens: [QTEventToken] = []
            forEachLevel(300) { type in
                for (bus, seen) in zip(buses, seen) { tokens.append(subscribe(type, on: bus, seen)) }
            }
            var expected: [String] = []
            for round in 0..<3 {
                forEachLevel(300) { type in
                    expected.append(type.eventName)
                    #expect(dispatchLevel(type, on: buses[0], value: round) == 1)
                }
            }
            #expect(seen[0].values == expected)
            #expect(seen[1].values.isEmpty)
            // The second bus learns its own ids; the first keeps working with its own.
            forEachLevel(300) { type in #expect(dispatchLevel(type, on: buses[1], value: 0) == 1) }
            forEachLevel(300) { type in #expect(dispatchLevel(type, on: buses[0], value: 0) == 1) }
            #expect(seen[1].count == 300)
            #expect(seen[0].count == 4 * 300)
            for token in tokens { token.dispose() }
        }

        /// Four threads dispatch 200 types each, none dispatched on the bus before, in
        /// different orders: types are registered, and the table grows, while others
        /// read it.
        @Test func firstDispatchesFromManyThreads() {
            let bus = QTEventBus()
            let seen = Recorder<String>()
            var tokens: [QTEventToken] = []
            var names: [String] = []
            forEachLevel(200) { type in
                tokens.append(subscribe(type, on: bus, seen))
                names.append(type.eventName)
            }
            let failures = Counter()
            onThreads(4) { thread in
                for _ in 0..<5 {
                    var types: [any LevelEvent.Type] = []
                    forEachLevel(200) { types.append($0) }
                    if thread % 2 == 1 { types.reverse() }
                    for type in types where dispatchLevel(type, on: bus, value: thread) != 1 { failures.increment() }
                }
            }
            #expect(failures.value == 0)
            let counts = Dictionary(grouping: seen.values, by: { $0 }).mapValues(\.count)
            #expect(counts.count == 200)
            #expect(names.allSatisfy { counts[$0] == 20 })
            for token in tokens { token.dispose() }
        }

        /// Two Swift types with one engine name have a handle each, of one engine type:
        /// each typed subscriber reads its own type's values, and the bytes one decodes
        /// the other's dispatches when they carry bytes (here, they do not).
        @Test func typesSharingANameShareTheEngineType() {
            let bus = QTEventBus()
            let plain = Recorder<Int>(), bytes = Recorder<UInt8>(), named = Recorder<[UInt8]>()
            let tokens = [
                bus.on(SharedPlain.self).next { plain.append($0.n) },
                bus.on(SharedBytes.self).next { bytes.append($0.n) },
                bus.on(named: "TypeIdTests.Shared").next { named.append($0.bytes) },
            ]
            for round in 0..<2 {
                #expect(bus.dispatch(SharedPlain(n: round)) == 3)
                #expect(bus.dispatch(SharedBytes(n: UInt8(round + 10))) == 3)
            }
            #expect(plain.values == [0, 1])
            #expect(bytes.values == [10, 11])
            #expect(named.values == [[], [10], [], [11]])
            for token in tokens { token.dispose() }
        }

        /// A type posted before it was ever dispatched on the bus, and dispatched after,
        /// and the other way round on a second bus: the same handle serves both.
        @Test func postedAndSynchronousDispatchesShareTheHandle() {
            for postFirst in [true, false] {
                let bus = QTEventBus()
                let seen = Recorder<Int>()
                let token = bus.on(PingEvent.self).next { seen.append($0.n) }
                if postFirst { #expect(bus.dispatchOnBusQueue(PingEvent(n: 1)) == 0) }
                #expect(bus.dispatch(PingEvent(n: 2)) == 1)
                if !postFirst { #expect(bus.dispatchOnBusQueue(PingEvent(n: 1)) == 0) }
                #expect(waitUntil { seen.count == 2 })
                #expect(Set(seen.values) == [1, 2])
                token.dispose()
            }
        }

        /// By id or by name, subscribers of the name and the no-subscriber event see the
        /// same type, subtype and count.
        @Test func namedAndNoSubscriberDeliveriesAreAsByName() {
            let bus = QTEventBus()
            let named = Recorder<QTNamedEvent>()
            let token = bus.on(named: PingEvent.eventName).next { named.append($0) }
            for n in 0..<3 { #expect(bus.dispatch(PingEvent(n: n)) == 1) }
            #expect(named.values.map(\.type) == Array(repeating: PingEvent.eventName, count: 3))
            token.dispose()
            let lost = Recorder<QTNamedEvent>()
            let lostToken = bus.on(named: QTEventBus.noSubscriberTypeName).next { lost.append($0) }
            #expect(bus.dispatch(PingEvent(n: 9)) == 0)
            #expect(lost.values.map(\.subType) == [PingEvent.eventName])
            lostToken.dispose()
        }
    }
}
