// SPDX-License-Identifier: MIT
// subscriptions(): what is subscribed on a bus, Swift's and C's, in dispatch order.
import QTEventBusTestSupport
import QTEventBus
import Testing

extension QTBusTests {
    @Suite("Inspection")
    struct InspectionTests {

        @Test func listsEverySubscriptionInDispatchOrder() {
            let bus = QTEventBus()
            #expect(bus.subscriptions().isEmpty)
            let plain = bus.on(named: "Inspected").next { _ in }
            let first = bus.on(named: "Inspected").ofSubType("a").ofSubType("b").priority(7).once().next { _ in }
            let replaying = bus.on(named: "Inspected").replay().next { _ in }
            let all = bus.subscriptions()
            #expect(all.map(\.token) == [first.id, plain.id, replaying.id])
            #expect(all.map(\.type) == ["Inspected", "Inspected", "Inspected"])
            #expect(all[0].subTypes == ["a", "b"] && all[0].priority == 7 && all[0].once && !all[0].replay)
            #expect(all[1].subTypes.isEmpty && all[1].priority == 0 && !all[1].once)
            #expect(all[2].replay && !all[2].queued && !all[2].inBag)
            first.dispose()
            #expect(bus.subscriptions().count == 2)
            plain.dispose()
            replaying.dispose()
            #expect(bus.subscriptions().isEmpty)
        }
    }
}
