// SPDX-License-Identifier: MIT
// The layouts the Swift API's delivery machinery computes by hand (its page:
// Sources/QTEventBus/Delivery/_Invariants.swift), checked against the compiler's: a
// compiler or an edit that moves a field, grows a closure or changes a cell fails here,
// by name, instead of a release hook writing into the wrong field.
@testable import QTEventBus
import QTBusEngine
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("Delivery layouts")
    struct DeliveryLayoutTests {
        /// Layouts 1 to 3: cells, the subscription object, closures.
        @Test func theLayoutsTheDeliveryCodeComputesAreTheCompilers() {
            #expect(_qtDeliveryLayoutProblems() == [])
        }

        /// Layout 2 at work: the release hook clears the handler's context in place and
        /// lets the captured object go, while the object (the token) stays.
        @Test func theReleaseHookDropsTheHandlerInPlace() {
            weak var watched: Token?
            let subscription: _QTNamedSubscription
            do {
                let captured = Token()
                watched = captured
                subscription = _QTNamedSubscription(handler: { _ in _ = captured }, extras: nil)
            }
            let field = subscription.handlerField
            #expect(field != nil, "the handler is where handlerOffset says")
            #expect(watched != nil)
            let function = field?.load(as: UInt.self)
            subscription.released()
            #expect(watched == nil, "the context was released")
            #expect(field?.load(fromByteOffset: MemoryLayout<UInt>.size, as: UInt.self) == 0, "a nil context")
            #expect(field?.load(as: UInt.self) == function, "the function stays")
            #expect(subscription.isCancelled)
        }

        /// Layout 4: engine token ids never have the spare bit, which a disposed token
        /// sets beside its id.
        @Test func aTokenWordIsTheEngineIdAndTheCancelledBit() {
            let bus = QTEventBus()
            let tokens = (0..<600).map { _ in bus.on(PingEvent.self).next { _ in } }
            for token in tokens {
                #expect(token.id != 0 && token.id & _qtEngineTokenSpareBit == 0)
                #expect(!token.isCancelled)
            }
            for token in tokens {
                let id = token.id
                token.dispose()
                #expect(token.isCancelled && token.id == id)
            }
        }
    }
}
