// SPDX-License-Identifier: MIT
// Normal and subtype events (QTEventBus's testNormalEvent / testSubTypeEvent), generic
// type keys, ordering, re-entrancy and ONCE (invalid names: MisuseTests).
import QTEventBusTestSupport
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("Typed events")
    struct TypedEventTests {

        @Test func normalEventReachesItsSubscriber() {
            let bus = QTEventBus()
            let got = Recorder<PingEvent>()
            let token = bus.on(PingEvent.self).next { got.append($0) }
            #expect(token.isActive)
            #expect(bus.dispatch(PingEvent(n: 1)) == 1, "one subscription reached")
            #expect(bus.dispatch(PingEvent(n: 2)) == 1)
            #expect(got.values == [PingEvent(n: 1), PingEvent(n: 2)], "delivered before dispatch returned, in order")
            token.dispose()
            #expect(bus.dispatch(PingEvent(n: 3)) == 0)
            #expect(got.count == 2)
        }

        @Test func subTypeSelectsEvents() {
            let bus = QTEventBus()
            let alice = Recorder<String>(), anyone = Recorder<String>(), aliceOrBob = Recorder<String>()
            let t1 = bus.on(LoginEvent.self).ofSubType("alice").next { alice.append($0.userId) }
            let t2 = bus.on(LoginEvent.self).next { anyone.append($0.userId) }
            let t3 = bus.on(LoginEvent.self).ofSubType("alice").ofSubType("bob").ofSubType("bob").next {
                aliceOrBob.append($0.userId)
            }
            #expect(bus.dispatch(LoginEvent(userId: "alice")) == 3)
            #expect(bus.dispatch(LoginEvent(userId: "bob")) == 2)
            #expect(bus.dispatch(LoginEvent(userId: "carol")) == 1)
            #expect(alice.values == ["alice"])
            #expect(anyone.values == ["alice", "bob", "carol"])
            #expect(aliceOrBob.values == ["alice", "bob"], "a repeated subtype still delivers each event once")
            #expect(bus.subscriberCount(of: LoginEvent.self) == 3)
            #expect(bus.subscriberCount(of: LoginEvent.self, subType: "bob") == 2)
            #expect(bus.subscriberCount(of: LoginEvent.self, subType: "zed") == 1)
            [t1, t2, t3].forEach { $0.dispose() }
            #expect(bus.subscriberCount(of: LoginEvent.self) == 0)
        }

        @Test func typesAreKeyedByTheirFullSwiftTypeIncludingGenericParameters() {
            let bus = QTEventBus()
            let ints = Recorder<Int>(), strings = Recorder<String>()
            let t1 = bus.on(GenericEvent<Int>.self).next { ints.append($0.value) }
            let t2 = bus.on(GenericEvent<String>.self).next { strings.append($0.value) }
            bus.dispatch(GenericEvent(value: 7))
            bus.dispatch(GenericEvent(value: "seven"))
            #expect(ints.values == [7])
            #expect(strings.values == ["seven"])
            #expect(GenericEvent<Int>.eventName == String(reflecting: GenericEvent<Int>.self))
            #expect(
                GenericEvent<Int>.eventName.contains("GenericEvent<Swift.Int>"),
                Comment(rawValue: GenericEvent<Int>.eventName))
            #expect(bus.subscriberCount(named: GenericEvent<Int>.eventName) == 1, "the engine sees the Swift name")
            t1.dispose()
            t2.dispose()
        }

        @Test func veryLongGenericNamesAreShortenedUniquely() {
            // 13 levels; `G` only keeps the lines short (the names are GenericEvent's).
            typealias G<T: Sendable & Equatable> = GenericEvent<T>
            typealias Deep = G<G<G<G<G<G<G<G<G<G<G<G<G<Int>>>>>>>>>>>>>
            typealias Deep2 = G<G<G<G<G<G<G<G<G<G<G<G<G<String>>>>>>>>>>>>>
            #expect(String(reflecting: Deep.self).utf8.count > 255)
            #expect(Deep.eventName.utf8.count <= 255)
            #expect(Deep.eventName != Deep2.eventName)
            let bus = QTEventBus()
            let got = Counter()
            let token = bus.on(Deep.self).next { _ in got.increment() }
            bus.dispatch(
                G(
                    value: G(
                        value: G(
                            value: G(
                                value: G(
                                    value: G(
                                        value: G(
                                            value: G(
                                                value: G(
                                                    value: G(
                                                        value:
                                                            G(value: G(value: G(value: 1))))))))))))))
            #expect(got.value == 1)
            token.dispose()
        }

        @Test func priorityThenSubtypeBeforeWholeTypeThenSubscriptionOrder() {
            let bus = QTEventBus()
            let order = Recorder<String>()
            var tokens = [QTEventToken]()
            tokens.append(bus.on(LoginEvent.self).next { _ in order.append("whole-0a") })
            tokens.append(bus.on(LoginEvent.self).ofSubType("alice").next { _ in order.append("alice-0") })
            tokens.append(bus.on(LoginEvent.self).priority(5).next { _ in order.append("whole-5") })
            tokens.append(bus.on(LoginEvent.self).next { _ in order.append("whole-0b") })
            tokens.append(
                bus.on(LoginEvent.self).ofSubType("alice").priority(-1).next { _ in order.append("alice--1") })
            bus.dispatch(LoginEvent(userId: "alice"))
            #expect(order.values == ["whole-5", "alice-0", "whole-0a", "whole-0b", "alice--1"])
            tokens.forEach { $0.dispose() }
        }

        @Test func dispatchFromAHandlerIsDepthFirstAndNewSubscriptionsMissTheCurrentEvent() {
            let bus = QTEventBus()
            let order = Recorder<String>()
            let late = Counter()
            let lateToken = LockedValue<QTEventToken?>()
            let t1 = bus.on(PingEvent.self).next { event in
                order.append("ping \(event.n)")
                if event.n == 1 {
                    bus.dispatch(LoginEvent(userId: "inner"))
                    lateToken.value = (bus.on(PingEvent.self).next { _ in late.increment() })
                }
            }
            let t2 = bus.on(LoginEvent.self).next { order.append("login \($0.userId)") }
            bus.dispatch(PingEvent(n: 1))
            #expect(order.values == ["ping 1", "login inner"])
            #expect(late.value == 0, "subscribed during the dispatch: does not receive it")
            bus.dispatch(PingEvent(n: 2))
            #expect(late.value == 1)
            [t1, t2, lateToken.value!].forEach { $0.dispose() }
        }

        @Test func onceDeliversAtMostOnceEvenUnderConcurrentDispatch() {
            let bus = QTEventBus()
            let got = Counter()
            let token = bus.on(PingEvent.self).once().next { _ in got.increment() }
            #expect(token.isActive)
            onThreads(4) { i in
                for n in 0..<200 { bus.dispatch(PingEvent(n: i * 1000 + n)) }
            }
            #expect(got.value == 1)
            #expect(!token.isActive, "a fired ONCE subscription is over")
            token.dispose()  // harmless
        }

        @Test func stringEventsUseTheStringAsSubtype() {
            // QTEventBus's string events: `dispatch:@"name"` reaches on:NSString ofSubType:"name".
            let bus = QTEventBus()
            let refresh = Counter(), all = Recorder<String>()
            let t1 = bus.on(String.self).ofSubType("refresh").next { _ in refresh.increment() }
            let t2 = bus.on(String.self).next { all.append($0) }
            bus.dispatch("refresh")
            bus.dispatch("logout")
            #expect(refresh.value == 1)
            #expect(all.values == ["refresh", "logout"])
            // `bus.dispatch("")` traps: MisuseTests.
            t1.dispose()
            t2.dispose()
        }

        // Refused subscriptions and dispatches trap: MisuseTests.

        @Test func eventsNobodyReceivesBecomeNoSubscriberEvents() {
            let bus = QTEventBus()
            let lost = Recorder<QTNamedEvent>()
            let token = bus.on(named: QTEventBus.noSubscriberTypeName).next { lost.append($0) }
            #expect(bus.dispatch(PingEvent(n: 1)) == 0)
            #expect(lost.values.map(\.subType) == [PingEvent.eventName])
            token.dispose()
        }
    }
}
