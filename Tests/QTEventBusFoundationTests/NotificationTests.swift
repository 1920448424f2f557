// SPDX-License-Identifier: MIT
// NotificationCenter bridging (QTEventBus's notification tests and issue #4): one
// observer per name however many subscribers, removed with the last one, never a
// subscriber without an observer.
import QTEventBusTestSupport
import Foundation
import QTEventBus
@testable import QTEventBusFoundation
import Testing

extension QTBusTests {
    @Suite("Notifications")
    struct NotificationTests {
        let center = NotificationCenter.default

        func observers(_ bus: QTEventBus, _ name: String) -> (observers: Int, claims: Int) {
            _QTNotificationObservers.shared.state(busID: ObjectIdentifier(bus), name)
        }

        @Test func postedNotificationReachesSubscribers() {
            let bus = QTEventBus()
            let got = Recorder<String>()
            let token = bus.on(Notification.self).ofSubType("QTTestLogin").next { note in
                got.append("\(note.name.rawValue) \(note.userInfo?["user"] as? String ?? "")")
            }
            center.post(name: Notification.Name("QTTestLogin"), object: nil, userInfo: ["user": "alice"])
            center.post(name: Notification.Name("QTTestOther"), object: nil)
            #expect(got.values == ["QTTestLogin alice"])
            token.dispose()
            center.post(name: Notification.Name("QTTestLogin"), object: nil)
            #expect(got.count == 1)
        }

        @Test func oneObserverPerNameRemovedWithTheLastSubscriber() {
            let bus = QTEventBus()
            let calls = Counter()
            let name = "QTTestUnique"
            #expect(observers(bus, name).observers == 0)
            let tokens = (0..<5).map { _ in bus.on(Notification.self).ofSubType(name).next { _ in calls.increment() } }
            #expect(observers(bus, name).observers == 1, "issue #4: one observer however many subscribers")
            #expect(observers(bus, name).claims == 5)
            center.post(name: Notification.Name(name), object: nil)
            #expect(calls.value == 5, "each subscriber once: the notification is dispatched once")
            tokens.dropLast().forEach { $0.dispose() }
            #expect(observers(bus, name).observers == 1)
            tokens.last!.dispose()
            #expect(observers(bus, name).observers == 0, "removed with the last subscriber")
            center.post(name: Notification.Name(name), object: nil)
            #expect(calls.value == 5)
            let again = bus.on(Notification.self).ofSubType(name).next { _ in calls.increment() }
            #expect(observers(bus, name).observers == 1, "a later first subscriber observes again")
            center.post(name: Notification.Name(name), object: nil)
            #expect(calls.value == 6)
            again.dispose()
        }

        @Test func noSubscriberIsEverLeftWithoutAnObserver() {
            // One thread keeps replacing its subscription (new, then dispose old) while
            // another churns; after each new subscribe, a post must reach it.
            let bus = QTEventBus()
            let name = "QTTestRace"
            let misses = Counter(), checks = Counter()
            DispatchQueue.concurrentPerform(iterations: 2) { thread in
                if thread == 0 {
                    var previous: QTEventToken? = nil
                    for _ in 0..<500 {
                        let got = Counter()
                        let token = bus.on(Notification.self).ofSubType(name).next { _ in got.increment() }
                        previous?.dispose()
                        previous = token
                        NotificationCenter.default.post(name: Notification.Name(name), object: nil)
                        checks.increment()
                        if got.value == 0 { misses.increment() }
                    }
                    previous?.dispose()
                } else {
                    for _ in 0..<500 {
                        bus.on(Notification.self).ofSubType(name).next { _ in }.dispose()
                    }
                }
            }
            #expect(checks.value == 500)
            #expect(misses.value == 0, "a new subscriber always found an observer in place")
            #expect(observers(bus, name).observers == 0)
        }

        @Test func freeWithEndsTheClaim() {
            let bus = QTEventBus()
            let name = "QTTestFreeWith"
            final class Screen {}
            var screen: Screen? = Screen()
            let calls = Counter()
            bus.on(Notification.self).ofSubType(name).freeWith(screen!).next { _ in calls.increment() }
            center.post(name: Notification.Name(name), object: nil)
            #expect(calls.value == 1)
            screen = nil
            center.post(name: Notification.Name(name), object: nil)
            #expect(calls.value == 1)
            #expect(observers(bus, name).observers == 0, "the subscription ended with its object, and its claim")
        }

        @Test func wholeTypeSubscribersAndDirectDispatch() {
            let bus = QTEventBus()
            let all = Recorder<String>()
            let whole = bus.on(Notification.self).next { all.append($0.name.rawValue) }
            let named = bus.on(Notification.self).ofSubType("QTTestWhole").next { _ in }
            center.post(name: Notification.Name("QTTestWhole"), object: nil)
            center.post(name: Notification.Name("QTTestUnobserved"), object: nil)
            bus.dispatch(Notification(name: Notification.Name("QTTestDirect")))
            #expect(
                all.values == ["QTTestWhole", "QTTestDirect"],
                "names nobody observes are not bridged; direct dispatch reaches the bus only")
            whole.dispose()
            named.dispose()
        }

        @Test func mainQueueAndSubscribingFromInsideAHandler() {
            let bus = QTEventBus()
            let name = "QTTestNested"
            let inner = Counter()
            let holder = Recorder<QTEventToken>()
            let outer = bus.on(Notification.self).ofSubType(name).once().next { _ in
                // Subscribing (and so claiming an observer) from inside a notification.
                holder.append(bus.on(Notification.self).ofSubType(name + "2").next { _ in inner.increment() })
            }
            center.post(name: Notification.Name(name), object: nil)
            center.post(name: Notification.Name(name + "2"), object: nil)
            #expect(inner.value == 1)
            outer.dispose()
            holder.values.forEach { $0.dispose() }
            #expect(observers(bus, name).observers + observers(bus, name + "2").observers == 0)
        }

        @Test func destroyingTheBusRemovesItsObservers() {
            var bus: QTEventBus? = QTEventBus()
            let name = "QTTestBusGone"
            bus!.on(Notification.self).ofSubType(name).next { _ in }
            bus!.on(Notification.self).ofSubType(name).next { _ in }
            let id = ObjectIdentifier(bus!)
            #expect(_QTNotificationObservers.shared.state(busID: id, name).claims == 2)
            bus = nil
            #expect(
                _QTNotificationObservers.shared.state(busID: id, name).observers == 0,
                "the bus's subscriptions ended with it, and their claims")
        }
    }
}
