// SPDX-License-Identifier: MIT
// A token is its subscription's only Swift object (_Subscription.swift), yet a token kept
// after its subscription ended holds no user closure: whichever way it ended (dispose,
// freeWith object gone, ONCE, bus destroyed; typed, named and request subscriptions),
// the closure is released as it was when the token was a separate object. Also: the
// token's id, which shares a word with its disposed flag, and the size of a plain
// subscription's object.
import Dispatch
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("Token lifetime")
    struct TokenLifetimeTests {

        /// Subscribes with `subscribe(captured)`, a closure capturing a fresh object, and
        /// returns the token with a weak reference to the captured object.
        private func watch(_ subscribe: (Token) -> QTEventToken) -> (QTEventToken, () -> Bool) {
            weak var watched: Token?
            let token: QTEventToken
            do {
                let captured = Token()
                watched = captured
                token = subscribe(captured)
            }
            return (token, { watched != nil })
        }

        @Test func aKeptTokenOfADisposedSubscriptionHoldsNoClosure() {
            let bus = QTEventBus()
            let (typed, typedHeld) = watch { c in bus.on(PingEvent.self).next { _ in _ = c } }
            let (named, namedHeld) = watch { c in bus.on(named: "Ping.named").next { _ in _ = c } }
            let (request, requestHeld) = watch { c in bus.on(PingEvent.self).nextRequest { _, _ in _ = c } }
            let (queued, queuedHeld) = watch { c in
                bus.on(PingEvent.self).atQueue(DispatchQueue(label: "test.kept")).next { _ in _ = c }
            }
            for (token, held) in [(typed, typedHeld), (named, namedHeld), (request, requestHeld), (queued, queuedHeld)]
            {
                #expect(held())
                token.dispose()
                #expect(!held(), "released when dispose returned (no dispatch in progress)")
                #expect(!token.isActive)
            }
        }

        @Test func aKeptTokenOfAFiredOnceSubscriptionHoldsNoClosure() {
            let bus = QTEventBus()
            let calls = Counter()
            let (token, held) = watch { c in
                bus.on(PingEvent.self).once().next { _ in
                    _ = c
                    calls.increment()
                }
            }
            bus.dispatch(PingEvent(n: 1))
            bus.dispatch(PingEvent(n: 2))
            #expect(calls.value == 1)
            #expect(!held(), "released once the dispatch that fired it returned")
            #expect(!token.isActive)
            token.dispose()  // harmless
        }

        @Test func aKeptTokenWhoseOwnerIsGoneHoldsNoClosure() {
            let bus = QTEventBus()
            var owner: Owner? = Owner()
            let (token, held) = watch { c in bus.on(PingEvent.self).freeWith(owner!).next { _ in _ = c } }
            owner = nil
            bus.dispatch(PingEvent(n: 1))
            #expect(!held(), "released by the end of the next dispatch")
            #expect(!token.isActive)
        }

        @Test func aKeptTokenOfADestroyedBusHoldsNoClosure() {
            var bus: QTEventBus? = QTEventBus()
            let (token, held) = watch { c in bus!.on(PingEvent.self).next { _ in _ = c } }
            bus = nil
            #expect(!held())
            #expect(!token.isActive)
        }

        @Test func theIdOutlivesTheDispose() {
            let bus = QTEventBus()
            let token = bus.on(PingEvent.self).next { _ in }
            let id = token.id
            #expect(id != 0 && token.isActive)
            token.dispose()
            #expect(token.id == id, "the id stays readable after dispose")
            #expect(!token.isActive)
            token.dispose()  // a second dispose does nothing
            #expect(token.id == id)
            #expect(token.description == "QTEventToken(\(id), inactive)")
        }

        @Test func aPlainSubscriptionIsOneSmallObject() {
            let bus = QTEventBus()
            let token = bus.on(PingEvent.self).next { _ in }
            defer { token.dispose() }
            // Header, state, deliver, handler: 56 bytes, a 64-byte malloc chunk (56
            // usable), beside the engine's 80-byte record in its pool pages. (Its only
            // Swift object in a release build; a debug build also allocates the
            // unspecialized fast path's closure context.)
            let usable = cpeer_malloc_usable_size(Unmanaged.passUnretained(token).toOpaque())
            #expect(usable <= 56, "the token of a plain subscription takes \(usable) usable bytes")
        }
    }
}
