// SPDX-License-Identifier: MIT
// QTEventToken.block() and unblock(): blocks nest, a blocked subscription is left out
// of dispatches (not called, not counted) and stays active; .stale once the token was
// disposed (on the Swift side or by C code) or fired; hops already queued by atQueue
// still run; a blocked once() subscription does not fire until unblocked; a blocked
// freeWith subscription whose object is gone is still released by the next dispatch.
// (An unblock too many traps: MisuseTests, `unblockTooMany`.)
import CQtbusShims
import Dispatch
import QTBusEngine
import QTEventBus
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("Blocking a subscription")
    struct BlockTests {

        @Test func blocksNestAndLeaveTheSubscriptionOut() throws {
            let bus = QTEventBus()
            let calls = Counter()
            let token = bus.on(PingEvent.self).next { _ in calls.increment() }
            try token.block()
            try token.block()
            #expect(bus.dispatch(PingEvent(n: 1)) == 0)
            #expect(token.isActive, "blocked is still live")
            #expect(bus.subscriberCount(of: PingEvent.self) == 1)
            try token.unblock()
            #expect(bus.dispatch(PingEvent(n: 2)) == 0, "blocked once more")
            try token.unblock()
            #expect(bus.dispatch(PingEvent(n: 3)) == 1)
            #expect(calls.value == 1)
            token.dispose()
        }

        @Test func onlyTheBlockedOneIsLeftOut() throws {
            let bus = QTEventBus()
            let seen = Recorder<String>()
            let a = bus.on(PingEvent.self).next { _ in seen.append("a") }
            let b = bus.on(PingEvent.self).next { _ in seen.append("b") }
            let c = bus.on(PingEvent.self).next { _ in seen.append("c") }
            try b.block()
            for n in 0..<3 { #expect(bus.dispatch(PingEvent(n: n)) == 2) }
            try b.unblock()
            #expect(bus.dispatch(PingEvent(n: 3)) == 3)
            #expect(seen.values == ["a", "c", "a", "c", "a", "c", "a", "b", "c"])
            for t in [a, b, c] { t.dispose() }
        }

        @Test func staleOnceDisposed() throws {
            let bus = QTEventBus()
            let token = bus.on(PingEvent.self).next { _ in }
            try token.block()
            token.dispose()  // no unblock needed first
            #expect(!token.isActive)
            #expect(throws: QTBusError.stale) { try token.block() }
            #expect(throws: QTBusError.stale) { try token.unblock() }

            // Disposed by C code: stale too, with a message naming the call.
            let other = bus.on(PingEvent.self).next { _ in }
            #expect(_qtbus_token_dispose(qtbus_token(id: other.id)) == 0)
            let error = #expect(throws: QTBusError.self) { try other.block() }
            #expect(error?.code == .stale)
            #expect(error?.message.contains("block") == true, "\(String(describing: error))")
        }

        @Test func onceDoesNotFireWhileBlocked() throws {
            let bus = QTEventBus()
            let calls = Counter()
            let token = bus.on(PingEvent.self).once().next { _ in calls.increment() }
            try token.block()
            #expect(bus.dispatch(PingEvent(n: 1)) == 0)
            #expect(token.isActive)
            try token.unblock()
            #expect(bus.dispatch(PingEvent(n: 2)) == 1)
            #expect(bus.dispatch(PingEvent(n: 3)) == 0)
            #expect(calls.value == 1)
            #expect(throws: QTBusError.stale) { try token.block() }
        }

        @Test func hopsQueuedBeforeTheBlockStillRun() async throws {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.block")
            let gate = DispatchSemaphore(value: 0)
            queue.async { gate.wait() }
            let got = Recorder<Int>()
            let token = bus.on(PingEvent.self).atQueue(queue).next { got.append($0.n) }
            #expect(bus.dispatch(PingEvent(n: 1)) == 1)
            try token.block()
            #expect(bus.dispatch(PingEvent(n: 2)) == 0)
            gate.signal()
            #expect(await bus.waitUntilIdle(timeout: .seconds(10)))
            #expect(got.values == [1])
            token.dispose()
        }

        @Test func aBlockedFreeWithSubscriptionStillEndsWithItsObject() throws {
            let bus = QTEventBus()
            var owner: Owner? = Owner()
            weak var watched: Token?
            let token: QTEventToken
            do {
                let captured = Token()
                watched = captured
                token = bus.on(PingEvent.self).freeWith(owner!).next { _ in _ = captured }
            }
            try token.block()
            owner = nil
            #expect(bus.dispatch(PingEvent(n: 1)) == 0)
            #expect(watched == nil, "closure released by the end of the next dispatch, blocked or not")
            #expect(!token.isActive)
            #expect(throws: QTBusError.stale) { try token.unblock() }
        }
    }
}
