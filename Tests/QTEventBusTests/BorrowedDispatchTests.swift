// SPDX-License-Identifier: MIT
// A synchronous typed dispatch lends the engine a cell on the dispatching frame's stack
// (_qtEngineDispatchSwift); the engine asks for a heap copy only when a delivery
// outlives the dispatch. These tests make every such delivery happen after the frame
// is gone and its stack overwritten, with a value whose payload is on the heap (a
// String too long to be stored inline, an array, a class reference), so a delivery
// that read the borrowed cell instead of a copy would read garbage.
import CQtbusShims
import Dispatch
import Glibc
import QTBusEngine
@testable import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport
import Testing

/// An event whose value owns heap memory; `seed` picks the contents.
struct HeapPayloadEvent: QTEvent {
    let text: String
    let numbers: [Int]
    let token: Token?
    let subType: String?
    var eventSubType: String? { subType }

    init(seed: Int, token: Token? = nil, subType: String? = nil) {
        text = String(repeating: "payload-\(seed)-", count: 8)
        numbers = Array(seed..<seed + 64)
        self.token = token
        self.subType = subType
    }

    /// What a test records: the contents without the token, so that recording does
    /// not keep the token alive.
    struct Contents: Sendable {
        let text: String
        let numbers: [Int]

        /// Whether these are the contents `init(seed:)` made.
        func isIntact(seed: Int) -> Bool {
            text == String(repeating: "payload-\(seed)-", count: 8) && numbers == Array(seed..<seed + 64)
        }
    }

    var contents: Contents { Contents(text: text, numbers: numbers) }
}

/// Dispatches from a frame of its own, which is gone when it returns.
@inline(never)
func dispatchFromAnEndedFrame(
    _ bus: QTEventBus, seed: Int, token: Token? = nil, subType: String? = nil,
    sticky: Bool = false
) -> Int {
    bus.dispatch(HeapPayloadEvent(seed: seed, token: token, subType: subType), sticky: sticky)
}

/// Overwrites the stack where the frames of the caller's callees were.
@inline(never)
func scribbleStack(depth: Int = 8) {
    withUnsafeTemporaryAllocation(byteCount: 1024, alignment: 16) { buffer in
        memset(buffer.baseAddress!, 0xA5, buffer.count)
        if depth > 0 { scribbleStack(depth: depth - 1) }
        // Keeps the buffer from being optimized away.
        if buffer[Int(depth)] != 0xA5 { fatalError("stack scribble") }
    }
}

/// An engine subscription on a qtbus_queue (what C code makes with
/// `QTBUS_SUB(... .queue = q)`), whose handler reads the Swift HeapPayloadEvent out of the
/// event's object as the Swift API's delivery does. Each delivery first waits for
/// `gate`, so the test decides when the queued deliveries run.
final class QueuedReader: @unchecked Sendable {
    // @unchecked: `got` is a locked recorder; the rest is set in init.
    let got = Recorder<HeapPayloadEvent.Contents>()
    let gate = DispatchSemaphore(value: 0)
    private var token = qtbus_token(id: 0)
    private let queue: OpaquePointer

    init(bus: QTEventBus, type: String, once: Bool = false) {
        queue = _qtbus_queue_create("test.queued-reader")!
        var options = qtbus_sub_options()
        options.queue = queue
        options.flags = once ? UInt32(QTBUS_SUB_ONCE) : 0
        let userdata = Unmanaged.passRetained(self).toOpaque()
        let status = _qtbus_subscribe(
            bus.cBus, type, &options,
            { event, userdata in
                let reader = Unmanaged<QueuedReader>.fromOpaque(userdata!).takeUnretainedValue()
                reader.gate.wait()
                reader.read(event!)
            }, userdata,
            { userdata in
                Unmanaged<QueuedReader>.fromOpaque(userdata!).release()
            }, &token)
        precondition(status == 0, "subscribe: \(status)")
    }

    private func read(_ event: OpaquePointer) {
        guard let value = _qtCellValue(HeapPayloadEvent.self, in: event) else { return }
        got.append(value.pointee.contents)
    }

    func stop() {
        _ = _qtbus_token_dispose(token)
        _qtbus_queue_release(queue)
    }
}

extension QTBusTests {
    @Suite("Borrowed dispatch")
    struct BorrowedDispatchTests {

        @Test func stickyKeepsACopyOfABorrowedDispatch() {
            let bus = QTEventBus()
            weak var watched: Token?
            do {
                let t = Token()
                watched = t
                #expect(dispatchFromAnEndedFrame(bus, seed: 1, token: t, sticky: true) == 0)
            }
            scribbleStack()
            #expect(watched != nil, "the kept copy holds the value")
            let got = Recorder<HeapPayloadEvent.Contents>()
            let sub = bus.on(HeapPayloadEvent.self).replay().next { got.append($0.contents) }
            #expect(got.count == 1)
            #expect(got.values.first?.isIntact(seed: 1) ?? false, "replayed from the copy")
            sub.dispose()
            #expect(bus.removeSticky(HeapPayloadEvent.self) == 1)
            #expect(waitUntil(2) { watched == nil }, "the copy is released once the sticky event is dropped")
        }

        @Test func engineQueuedSubscribersReadACopyAfterTheDispatchReturned() {
            let bus = QTEventBus()
            let reader = QueuedReader(bus: bus, type: HeapPayloadEvent.eventName)
            let once = QueuedReader(bus: bus, type: HeapPayloadEvent.eventName, once: true)
            let sync = Recorder<HeapPayloadEvent.Contents>()
            let plain = bus.on(HeapPayloadEvent.self).next { sync.append($0.contents) }
            weak var watched: Token?
            do {
                let t = Token()
                watched = t
                #expect(dispatchFromAnEndedFrame(bus, seed: 2, token: t) == 3)
            }
            #expect(dispatchFromAnEndedFrame(bus, seed: 3) == 2, "the ONCE subscription fired")
            scribbleStack()
            #expect(sync.values.map { $0.isIntact(seed: $0.numbers[0]) } == [true, true])
            for _ in 0..<2 { reader.gate.signal() }
            once.gate.signal()
            #expect(waitUntil { reader.got.values.count == 2 && once.got.values.count == 1 })
            #expect(reader.got.values[0].isIntact(seed: 2) && reader.got.values[1].isIntact(seed: 3))
            #expect(once.got.values[0].isIntact(seed: 2))
            #expect(waitUntil(2) { watched == nil }, "the copy is released after its last queued delivery")
            plain.dispose()
            reader.stop()
            once.stop()
        }

        @Test func replayBacklogKeepsACopyOfABorrowedDispatch() {
            let bus = QTEventBus()
            #expect(dispatchFromAnEndedFrame(bus, seed: 4, sticky: true) == 0)
            let inReplay = DispatchSemaphore(value: 0), resume = DispatchSemaphore(value: 0)
            let subscribed = DispatchSemaphore(value: 0)
            let got = Recorder<HeapPayloadEvent.Contents>()
            let token = LockedValue<QTEventToken?>()
            DispatchQueue.global().async {
                token.value =
                    (bus.on(HeapPayloadEvent.self).replay().next { event in
                        got.append(event.contents)
                        if got.count == 1 {  // the replay: hold the gate shut
                            inReplay.signal()
                            // Bounded: if a bug delivered the live event here first, on the
                            // test's thread, nobody would signal.
                            _ = resume.wait(timeout: .now() + 5)
                        }
                    })
                subscribed.signal()
            }
            #expect(inReplay.wait(timeout: .now() + 5) == .success)
            // The gate is shut: this live dispatch parks the event in the backlog and returns.
            #expect(dispatchFromAnEndedFrame(bus, seed: 5) == 1)
            scribbleStack()
            resume.signal()
            #expect(subscribed.wait(timeout: .now() + 5) == .success)
            #expect(got.count == 2)
            #expect(got.values[0].isIntact(seed: 4), "replayed")
            #expect(got.values[1].isIntact(seed: 5), "from the backlog, after its dispatch returned")
            token.value?.dispose()
        }

        @Test func noSubscriberEventCarriesACopyToAQueuedSubscriber() {
            let bus = QTEventBus()
            let reader = QueuedReader(bus: bus, type: QTEventBus.noSubscriberTypeName)
            weak var watched: Token?
            do {
                let t = Token()
                watched = t
                #expect(dispatchFromAnEndedFrame(bus, seed: 6, token: t) == 0, "nobody subscribes to the type")
            }
            scribbleStack()
            reader.gate.signal()
            #expect(waitUntil { reader.got.values.count == 1 })
            #expect(reader.got.values[0].isIntact(seed: 6))
            #expect(waitUntil(2) { watched == nil })
            reader.stop()
        }

        // The engine's side of a refused borrowed dispatch; `dispatch` itself traps on the
        // refusal (MisuseTests), so the status is read below it. Refused when the engine
        // hands the dispatch back (the type's first on the bus) and when it dispatches
        // alone (the type registered), for the same reasons.
        @Test(arguments: [false, true])
        func failedBorrowedDispatchKeepsNothing(registered: Bool) {
            let bus = QTEventBus()
            if registered { #expect(bus.dispatch(HeapPayloadEvent(seed: 6)) == 0) }
            weak var watched: Token?
            do {
                let t = Token()
                watched = t
                let status = bus._send(
                    HeapPayloadEvent(seed: 7, token: t, subType: ""), flags: UInt32(QTBUS_EVENT_STICKY),
                    mode: .now)
                #expect(status == QTBusError.invalidArgument.rawValue)
                #expect(String(cString: _qtbus_errmsg()) == "qtbus_dispatch: the subtype \"\" is empty")
                let nul = bus._send(HeapPayloadEvent(seed: 8, token: t, subType: "a\0b"), flags: 0, mode: .now)
                #expect(nul == QTBusError.invalidArgument.rawValue)
                #expect(String(cString: _qtbus_errmsg()) == "qtbus_dispatch: the subtype holds a NUL byte")
            }
            #expect(watched == nil, "no copy was made or kept")
            let got = Counter()
            let sub = bus.on(HeapPayloadEvent.self).replay().next { _ in got.increment() }
            #expect(got.value == 0)
            sub.dispose()
        }

        @Test func cSubscribersReadTheBytesOfABorrowedDispatch() {
            let user = String(repeating: "borrowed-user-", count: 4)
            let now = CReceived(slot: cpeer_listen("CLoginEvent", user))
            let later = CReceived(slot: cpeer_listen_queued("CLoginEvent", user))
            #expect(now.slot >= 0)
            #expect(later.slot >= 0)
            defer {
                now.stop()
                later.stop()
            }
            #expect(sendLogin(user) == 2)
            scribbleStack()
            #expect(waitUntil { later.count == 1 })
            for c in [now, later] {
                #expect(c.count == 1)
                #expect(c.data == user)
                #expect(c.subType == user)
                #expect(c.terminated)
                #expect(c.hadObject, "the Swift value travels as the object, copied for the queued one")
            }
        }

        @inline(never)
        private func sendLogin(_ user: String) -> Int {
            QTEventBus.shared.dispatch(CLoginEvent(userId: user))
        }
    }
}
