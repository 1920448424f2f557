// SPDX-License-Identifier: MIT
// Requests and replies (SXMessageTransfer): the login scenario, synchronous and with the
// auth service on a serial queue, several replies, completion timing, and replies
// crossing between Swift and C (the C peer, QTEventBusCTestSupport/cpeer.c) on the
// shared bus.
import Dispatch
import Foundation
import QTBusEngine
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport
import Testing

/// The login screen's request: {"account","pwd"} as JSON text, a C-visible type.
struct LoginRequest: QTBytesEvent, Equatable {
    static var eventName: String { "LoginRequest" }
    let account: String
    let pwd: String

    init(account: String, pwd: String) {
        self.account = account
        self.pwd = pwd
    }

    var json: String {
        let object = ["account": account, "pwd": pwd]
        let data = try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    var eventBytes: [UInt8] { Array(json.utf8) }

    init?(eventBytes: UnsafeRawBufferPointer, subType: String?) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(eventBytes)) as? [String: String],
            let account = object["account"], let pwd = object["pwd"]
        else { return nil }
        self.init(account: account, pwd: pwd)
    }
}

/// The auth service's answer.
func authenticate(_ login: LoginRequest) -> String {
    login.account == "alice" && login.pwd == "secret" ? "login ok" : "bad credentials"
}

extension QTBusTests {
    @Suite("Requests")
    struct RequestTests {

        // MARK: The login scenario

        @Test func loginSynchronous() {
            let bus = QTEventBus()
            let order = Recorder<String>()
            let auth = bus.on(LoginRequest.self).priority(700).reply { login -> [String] in
                order.append("auth")
                return [authenticate(login)]
            }
            let logger = bus.on(LoginRequest.self).next { login in order.append("logger \(login.account)") }
            defer {
                auth.dispose()
                logger.dispose()
            }

            let replies = Recorder<String>(), completions = Counter()
            let reached = bus.request(
                LoginRequest(account: "alice", pwd: "secret"),
                onReply: { reply in
                    #expect(reply.type == "LoginRequest")
                    replies.append(reply.string)
                },
                completion: {
                    #expect(replies.values == ["login ok"], "completion after the replies")
                    completions.increment()
                })
            #expect(reached == 2, "the auth service and the logger")
            #expect(completions.value == 1, "every handler synchronous: completed before request returned")
            #expect(order.values == ["auth", "logger alice"], "priority 700 first; the logger only observes")

            bus.request(
                LoginRequest(account: "alice", pwd: "wrong"), onReply: { replies.append($0.string) },
                completion: { completions.increment() })
            #expect(replies.values == ["login ok", "bad credentials"])
            #expect(completions.value == 2)
        }

        @Test func loginAsync() async throws {
            let bus = QTEventBus()
            let auth = bus.on(LoginRequest.self).priority(700).reply { [authenticate($0)] }
            let logged = Counter()
            let logger = bus.on(LoginRequest.self).next { _ in logged.increment() }
            defer {
                auth.dispose()
                logger.dispose()
            }

            let ok = try await bounded { try await bus.request(LoginRequest(account: "alice", pwd: "secret")) }
            #expect(ok.map(\.string) == ["login ok"])
            let bad = try await bounded {
                try await bus.request(LoginRequest(account: "bob", pwd: "secret"), replyAs: String.self)
            }
            #expect(bad == ["bad credentials"])
            #expect(logged.value == 2)
        }

        @Test func loginWithTheAuthServiceOnASerialQueue() {
            let bus = QTEventBus()
            let authQueue = DispatchQueue(label: "test.auth")
            let key = DispatchSpecificKey<Int>()
            authQueue.setSpecific(key: key, value: 700)
            let gate = DispatchSemaphore(value: 0)
            authQueue.async { gate.wait() }  // hold the queue: the request must not complete without it
            let handlerDone = Counter(), loggerSaw = Counter()
            let auth = bus.on(LoginRequest.self).priority(700).atQueue(authQueue).nextRequest { login, request in
                #expect(DispatchQueue.getSpecific(key: key) == 700, "the handler runs on the auth queue")
                #expect(request.reply(authenticate(login)))
                usleep(20_000)  // the completion must still wait for the return
                handlerDone.increment()
            }
            let logger = bus.on(LoginRequest.self).next { _ in loggerSaw.increment() }
            defer {
                auth.dispose()
                logger.dispose()
            }

            let replies = Recorder<String>(), repliesOnQueue = Counter()
            let completions = Counter(), completedAfterHandler = Counter()
            let reached = bus.request(
                LoginRequest(account: "alice", pwd: "secret"),
                onReply: { reply in
                    if DispatchQueue.getSpecific(key: key) == 700 { repliesOnQueue.increment() }
                    replies.append(reply.string)
                },
                completion: {
                    if handlerDone.value == 1 { completedAfterHandler.increment() }
                    completions.increment()
                })
            #expect(reached == 2)
            #expect(loggerSaw.value == 1, "the synchronous logger ran inside request")
            #expect(completions.value == 0, "the auth handler is still queued: not complete")
            #expect(replies.count == 0)
            gate.signal()
            #expect(waitUntil { completions.value == 1 })
            #expect(replies.values == ["login ok"])
            #expect(repliesOnQueue.value == 1, "the reply arrives on the replying queue")
            #expect(completedAfterHandler.value == 1, "completion after the last handler returned")
            flush(authQueue)
            #expect(completions.value == 1, "exactly once")
        }

        @Test func asyncRequestWaitsForTheQueuedAuthService() async throws {
            let bus = QTEventBus()
            let auth = bus.on(LoginRequest.self).priority(700).atQueue(DispatchQueue(label: "test.auth2"))
                .reply { login -> [String] in
                    usleep(10_000)
                    return [authenticate(login)]
                }
            defer { auth.dispose() }
            let replies = try await bounded {
                try await bus.request(LoginRequest(account: "alice", pwd: "secret"), replyAs: String.self)
            }
            #expect(replies == ["login ok"])
        }

        // MARK: Replies and completion

        @Test func severalRepliesFromOneHandler() async throws {
            let bus = QTEventBus()
            let search = bus.on(named: "Search").nextRequest { event, request in
                for hit in ["song 1", "song 2", "song 3"] where hit.contains(event.text) {
                    #expect(request.reply(hit))
                }
            }
            let more = bus.on(named: "Search").priority(-1).reply { _ in [[UInt8]([0, 1, 2])] }
            defer {
                search.dispose()
                more.dispose()
            }
            let replies = try await bounded { try await bus.request(named: "Search", bytes: Array("song".utf8)) }
            #expect(replies.map(\.string).prefix(3) == ["song 1", "song 2", "song 3"], "in reply order")
            #expect(replies.last?.bytes == [0, 1, 2], "then the lower-priority handler's bytes")
            #expect(replies.count == 4)
        }

        @Test func aQueuedPlainHandlerDelaysTheCompletion() {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "test.observer")
            let gate = DispatchSemaphore(value: 0)
            queue.async { gate.wait() }
            let observed = Counter(), completions = Counter(), afterObserver = Counter()
            let observer = bus.on(LoginRequest.self).atQueue(queue).next { _ in observed.increment() }
            defer { observer.dispose() }
            #expect(
                bus.request(
                    LoginRequest(account: "a", pwd: "b"), onReply: nil,
                    completion: {
                        if observed.value == 1 { afterObserver.increment() }
                        completions.increment()
                    }) == 1)
            #expect(completions.value == 0, "a plain next on a queue is a handler of the request too")
            gate.signal()
            #expect(waitUntil { completions.value == 1 })
            #expect(afterObserver.value == 1)
        }

        @Test func aPlainDispatchIsNotARequest() {
            let bus = QTEventBus()
            let answered = Recorder<Bool>()
            let token = bus.on(LoginRequest.self).nextRequest { _, request in
                answered.append(request.isRequest)
                answered.append(request.reply("nobody listens"))
            }
            defer { token.dispose() }
            #expect(bus.dispatch(LoginRequest(account: "a", pwd: "b")) == 1)
            #expect(answered.values == [false, false])
            bus.request(LoginRequest(account: "a", pwd: "b"), onReply: nil)
            #expect(answered.values == [false, false, true, true], "a request without onReply still accepts replies")
        }

        // A reply through it traps: MisuseTests.
        @Test func aContextKeptAfterItsHandlerHoldsTheCompletion() {
            let bus = QTEventBus()
            let kept = LockedValue<QTRequestContext?>()
            let token = bus.on(named: "Keep").nextRequest { _, request in kept.value = request }
            defer { token.dispose() }
            let replies = Counter(), completions = Counter()
            bus.request(named: "Keep", onReply: { _ in replies.increment() }, completion: { completions.increment() })
            do {
                let context = kept.take()
                withExtendedLifetime(context) {
                    #expect(context != nil)
                    #expect(context?.isRequest == true)
                    #expect(replies.value == 0)
                    #expect(completions.value == 0, "the kept context holds the request open")
                }
            }
            #expect(completions.value == 1, "released with the context, once")
        }

        @Test func aRequestThatReachesNobodyCompletesAtOnce() async throws {
            let bus = QTEventBus()
            let completions = Counter()
            #expect(
                bus.request(
                    LoginRequest(account: "a", pwd: "b"), onReply: nil,
                    completion: { completions.increment() }) == 0)
            #expect(completions.value == 1)
            let replies = try await bounded { try await bus.request(named: "Nobody") }
            #expect(replies == [])
        }

        // A request with an invalid name traps, before anything is sent: MisuseTests.

        @Test func aCancelledRequestReturnsPromptlyWhileItsHandlerRuns() async throws {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "slow-handler")
            let finished = Counter()
            let token = bus.on(named: "Slow").atQueue(queue).nextRequest { _, request in
                usleep(1_000_000)  // a handler that takes a second
                request.reply("late")
                finished.increment()
            }
            defer { token.dispose() }
            let task = Task { try await bus.request(named: "Slow") }
            usleep(50_000)
            let cancelled = ContinuousClock.now
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            let waited = ContinuousClock.now - cancelled
            // Well before the handler's second is up, with room for a loaded machine.
            #expect(waited < .milliseconds(500), "cancellation answered in \(waited), not after the handler")
            #expect(finished.value == 0, "the handler is still running")
            // It finishes; its late reply goes nowhere; the bus answers the next request.
            #expect(waitUntil { finished.value == 1 })
            let token2 = bus.on(named: "Quick").reply { _ in ["ok"] }
            defer { token2.dispose() }
            #expect(try await bounded { try await bus.request(named: "Quick") }.map(\.string) == ["ok"])
        }

        @Test func aRequestCancelledBeforeItIsSentSendsNothing() async throws {
            let bus = QTEventBus()
            let received = Counter()
            let token = bus.on(named: "Never").nextRequest { _, _ in received.increment() }
            defer { token.dispose() }
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await bus.request(named: "Never")
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(received.value == 0)
        }

        @Test func aTimeoutReturnsTheRepliesSoFar() async throws {
            let bus = QTEventBus()
            let queue = DispatchQueue(label: "slow-replier")
            let fast = bus.on(named: "Mixed").nextRequest { _, request in request.reply("fast") }
            let slow = bus.on(named: "Mixed").atQueue(queue).nextRequest { _, request in
                usleep(1_000_000)
                request.reply("slow")
            }
            defer {
                fast.dispose()
                slow.dispose()
            }
            let started = ContinuousClock.now
            let replies = try await bus.request(named: "Mixed", timeout: .milliseconds(100))
            #expect(replies.map(\.string) == ["fast"])
            // Not waiting for the slow handler's second, with room for a loaded machine.
            #expect(ContinuousClock.now - started < .milliseconds(800))
            // Without a timeout, both.
            let all = try await bounded { try await bus.request(named: "Mixed") }
            #expect(Set(all.map(\.string)) == ["fast", "slow"])
        }

        @Test func aReplyCarriesTheRequestsTypeAndSubtype() async throws {
            let bus = QTEventBus()
            let token = bus.on(named: "Typed").reply { _ in ["x"] }
            defer { token.dispose() }
            let replies = try await bounded { try await bus.request(named: "Typed", subType: "sub") }
            #expect(replies == [QTReply(type: "Typed", subType: "sub", bytes: Array("x".utf8))])
        }

        // MARK: Swift and C

        @Test func aCReplierAnswersASwiftRequest() async throws {
            let bus = QTEventBus.shared
            let slot = cpeer_replier("LoginRequest", 700, "login ok")
            #expect(slot >= 0)
            let c = CReceived(slot: slot)
            defer { c.stop() }
            let logged = Recorder<String>()
            let logger = bus.on(LoginRequest.self).next { logged.append($0.account) }
            defer { logger.dispose() }

            let replies = try await bounded { try await bus.request(LoginRequest(account: "alice", pwd: "secret")) }
            #expect(replies.map(\.string) == ["login ok"])
            #expect(c.data == #"{"account":"alice","pwd":"secret"}"#, "C read the request's JSON bytes")
            #expect(logged.values == ["alice"])
        }

        @Test func aSwiftReplierAnswersACRequest() {
            let bus = QTEventBus.shared
            let order = Recorder<String>()
            let auth = bus.on(LoginRequest.self).priority(700).reply { login -> [String] in
                order.append("auth")
                return [authenticate(login)]
            }
            let logger = bus.on(LoginRequest.self).next { _ in order.append("logger") }
            defer {
                auth.dispose()
                logger.dispose()
            }

            #expect(cpeer_request("LoginRequest", nil, #"{"account":"alice","pwd":"secret"}"#) == 2)
            #expect(cRequestReplies() == "login ok|", "decoded from the C bytes, answered as text")
            #expect(cpeer_request_completions() == 1, "synchronous: completed inside qtbus_request")
            #expect(cpeer_request("LoginRequest", nil, #"{"account":"alice","pwd":"nope"}"#) == 2)
            #expect(cRequestReplies() == "bad credentials|")
            #expect(order.values == ["auth", "logger", "auth", "logger"])
        }

        @Test func aSwiftReplierOnAQueueAnswersACRequestBeforeItsCompletion() {
            let bus = QTEventBus.shared
            let queue = DispatchQueue(label: "test.cauth")
            let gate = DispatchSemaphore(value: 0)
            queue.async { gate.wait() }
            let auth = bus.on(LoginRequest.self).priority(700).atQueue(queue).reply { [authenticate($0)] }
            defer { auth.dispose() }
            #expect(cpeer_request("LoginRequest", nil, #"{"account":"alice","pwd":"secret"}"#) == 1)
            #expect(cpeer_request_completions() == 0, "the Swift handler is queued: the C request is open")
            gate.signal()
            #expect(waitUntil { cpeer_request_completions() == 1 })
            #expect(cRequestReplies() == "login ok|", "the reply came before the completion")
            flush(queue)
            #expect(cpeer_request_completions() == 1)
        }
    }
}
