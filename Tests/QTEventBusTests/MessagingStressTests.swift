// SPDX-License-Identifier: MIT
// Requests, commands and sources under several threads at once: every request completes
// exactly once after all its replies, every execution that started finishes exactly once
// and the executing events still alternate, start and stop never overlap, and every
// closure is released once everything is disposed. Run under ThreadSanitizer too
// (scripts/sanitize.sh swift-tsan).
import Dispatch
import QTBusEngine
import QTEventBus
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("Messaging stress")
    struct MessagingStressTests {

        @Test func requestsCommandsAndSourcesFromManyThreads() throws {
            let bus = QTEventBus()
            let threads = 4, rounds = 400
            weak var watchedReplier: Token?, watchedCommand: Token?, watchedSource: Token?

            // Requests: one replier on the dispatching thread, one on a serial queue.
            let replyQueue = DispatchQueue(label: "stress.reply")
            let replies = Counter()
            let completions = Recorder<Int>()
            let repliesAtCompletion = Recorder<Int>()
            // Commands: executions finish later, on other threads.
            let finishQueue = DispatchQueue(label: "stress.finish", attributes: .concurrent)
            let started = Counter(), bodies = Counter(), finished = Counter(), concurrentFinished = Counter()
            let executing = Recorder<String>()
            let executingToken = bus.on(named: QTEventBus.commandExecutingTypeName).ofSubType("serial")
                .next { executing.append($0.text) }
            // Sources: one connected and disconnected by hand, one following "Auto"'s subscribers.
            let manual = SideEffect(), auto = SideEffect()

            var tokens: [QTEventToken] = []
            let command: QTCommand<Int, String>
            let concurrent: QTCommand<Int, String>
            let source: QTSource
            let autoSource: QTSource
            do {
                let captured = Token(), capturedCommand = Token(), capturedSource = Token()
                watchedReplier = captured
                watchedCommand = capturedCommand
                watchedSource = capturedSource
                tokens.append(
                    bus.on(named: "Ask").priority(1).reply { _ in
                        _ = captured
                        return ["sync"]
                    })
                tokens.append(
                    bus.on(named: "Ask").atQueue(replyQueue).reply { _ in
                        _ = captured
                        return ["queued"]
                    })
                command = try QTCommand(bus: bus, name: "serial") { n, execution in
                    _ = capturedCommand
                    bodies.increment()
                    finishQueue.async {
                        execution.send("\(n)")
                        if execution.finish() { finished.increment() }
                    }
                }
                concurrent = try QTCommand(bus: bus, name: "parallel", concurrent: true) { n, execution in
                    _ = capturedCommand
                    finishQueue.async { if execution.finish() { concurrentFinished.increment() } }
                }
                source = try QTSource(
                    bus: bus, type: "Manual",
                    start: { _ in
                        _ = capturedSource
                        manual.start()
                    },
                    stop: { manual.stop() })
                autoSource = try QTSource(
                    bus: bus, type: "Auto", autoconnect: true,
                    start: { _ in
                        _ = capturedSource
                        auto.start()
                    }, stop: { auto.stop() })
            }

            let requests = Counter(), refused = Counter()
            onThreads(threads) { t in
                for i in 0..<rounds {
                    switch i % 4 {
                    case 0:
                        let id = t * rounds + i
                        let mine = Counter()
                        requests.increment()
                        bus.request(
                            named: "Ask", bytes: Array("\(id)".utf8),
                            onReply: { _ in
                                mine.increment()
                                replies.increment()
                            },
                            completion: {
                                repliesAtCompletion.append(mine.value)
                                completions.append(id)
                            })
                    case 1:
                        do throws(QTBusError) {
                            try command.start(i)
                            started.increment()
                        } catch {
                            #expect(error == .busy)
                        }
                        if (try? concurrent.start(i)) == nil { refused.increment() }
                    case 2:
                        #expect(throws: Never.self) {
                            if t % 2 == 0 { try source.connect() } else { try source.disconnect() }
                        }
                    default:
                        bus.on(named: "Auto").next { _ in }.dispose()
                    }
                }
            }

            let expected = threads * rounds / 4
            #expect(requests.value == expected)
            #expect(waitUntil(10) { completions.count == expected }, "every request completes")
            #expect(completions.values.sorted() == completions.values.sorted().uniqued(), "each exactly once")
            #expect(
                repliesAtCompletion.values == Array(repeating: 2, count: expected),
                "both replies before each completion")
            #expect(replies.value == 2 * expected)
            #expect(waitUntil(10) { !command.isExecuting && !concurrent.isExecuting })
            finishQueue.sync(flags: .barrier) {}
            #expect(started.value > 0)
            #expect(bodies.value == started.value, "a refused execute runs nothing")
            #expect(finished.value == started.value, "every execution finished exactly once")
            #expect(refused.value == 0, "a concurrent command never refuses")
            #expect(concurrentFinished.value == expected)
            let states = executing.values
            #expect(states.count % 2 == 0)
            #expect(
                zip(states, states.indices).allSatisfy { $0 == ($1 % 2 == 0 ? "1" : "0") },
                "executing alternates 1, 0, 1, 0... under contention")
            #expect(states.count / 2 == started.value, "not concurrent: one pair per execution")
            #expect(manual.alternated && auto.alternated, "start and stop never overlap")
            #expect(auto.starts.value == auto.stops.value, "no Auto subscriber is left")

            source.dispose()
            #expect(manual.starts.value == manual.stops.value, "disposed: stopped if it was connected")
            for token in tokens { token.dispose() }
            executingToken.dispose()
            command.dispose()
            concurrent.dispose()
            autoSource.dispose()
            flush(replyQueue)
            #expect(
                waitUntil { watchedReplier == nil && watchedCommand == nil && watchedSource == nil },
                "every closure released once everything is disposed")
        }

        @Test func asyncRequestsAndExecutesFromManyTasks() async throws {
            let bus = QTEventBus()
            let replier = bus.on(named: "Echo").atQueue(DispatchQueue(label: "stress.echo")).nextRequest {
                event, request in
                request.reply(event.text)
                request.reply(event.text + "!")
            }
            defer { replier.dispose() }
            let double = try QTCommand<Int, String>(bus: bus, name: "double", concurrent: true) { n, execution in
                DispatchQueue.global().async {
                    execution.send("\(n)")
                    execution.send("\(2 * n)")
                    execution.finish()
                }
            }
            try await bounded(20) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for n in 0..<200 {
                        group.addTask {
                            let replies = try await bus.request(named: "Echo", bytes: Array("\(n)".utf8))
                            #expect(replies.map(\.string) == ["\(n)", "\(n)!"])
                            let values = try await double.execute(n)
                            #expect(values == ["\(n)", "\(2 * n)"], "each execute gets its own execution's values")
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(!double.isExecuting)
        }
    }
}

extension Array where Element: Equatable {
    /// Without consecutive duplicates (of a sorted array: without duplicates).
    func uniqued() -> [Element] {
        var out: [Element] = []
        for e in self where out.last != e { out.append(e) }
        return out
    }
}
