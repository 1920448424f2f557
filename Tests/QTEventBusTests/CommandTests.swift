// SPDX-License-Identifier: MIT
// QTCommand (RACCommand): the full life of a command as Swift and C observers see it on
// the shared bus (executing 1 then 0, values as bytes, not enabled while executing,
// disabled, error with its message, concurrent flag, double finish), its streams, and
// C executing a Swift command.
import Dispatch
import Foundation
import QTBusEngine
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("Commands")
    struct CommandTests {

        @Test func theFullLifeAsCSeesIt() async throws {
            let c = CCommandObserver("save")
            defer { c.stop() }
            let states = Recorder<String>()
            let me = LockedValue<QTCommand<String, String>?>()
            let save = try QTCommand<String, String>(name: "save") { input, execution in
                if let me = me.value {  // during the execution, as Swift and C see it
                    states.append(
                        "executing \(me.isExecuting) enabled \(me.isEnabled) C \(cpeer_command_is_executing(me.id))")
                }
                execution.send("\(input)-a")
                execution.send("\(input)-b")
                execution.finish()
            }
            #expect(save.isEnabled)
            #expect(!save.isExecuting)

            me.value = save
            let values = try await bounded { try await save.execute("doc") }
            #expect(states.values == ["executing true enabled false C 1"])
            #expect(values == ["doc-a", "doc-b"], "this execution's values")
            #expect(c.executing.history == "1|0|", "executing 1 then 0")
            #expect(c.values.history == "doc-a|doc-b|", "values as their bytes")
            #expect(c.values.terminated)
            #expect(c.enabled.history == "0|1|", "not enabled while executing, then enabled")
            #expect(c.errors.count == 0)
            #expect(!save.isExecuting)
            #expect(save.isEnabled)

            try save.setEnabled(false)
            #expect(!save.isEnabled)
            #expect(c.enabled.history == "0|1|0|")
            do {
                _ = try await bounded { try await save.execute("no") }
                Issue.record("a disabled command executes nothing")
            } catch {
                #expect(error as? QTBusError == .busy)
            }
            #expect(throws: QTBusError.busy) { try save.start("no") }
            #expect(c.executing.history == "1|0|", "refused: nothing ran")
            try save.setEnabled(true)
            #expect(c.enabled.history == "0|1|0|1|")
            let again = try await bounded { try await save.execute("again") }
            #expect(again == ["again-a", "again-b"])
            #expect(c.executing.history == "1|0|1|0|")
        }

        @Test func notEnabledWhileExecutingAndASecondExecuteIsBusy() async throws {
            let bus = QTEventBus()
            let running = LockedValue<QTExecution<String>?>()
            let upload = try QTCommand<Int, String>(bus: bus, name: "upload") { n, execution in
                execution.send("started \(n)")
                running.value = execution  // finishes later
            }
            try upload.start(1)
            #expect(upload.isExecuting)
            #expect(!upload.isEnabled, "not concurrent: busy while executing")
            #expect(throws: QTBusError.busy) { try upload.start(2) }
            do {
                _ = try await bounded { try await upload.execute(3) }
                Issue.record("a second execute while running is refused")
            } catch {
                #expect(error as? QTBusError == .busy)
            }
            let execution = try #require(running.take())
            #expect(execution.finish())
            #expect(!upload.isExecuting)
            #expect(upload.isEnabled)
            // The awaiting form, finished from another thread.
            let later = try QTCommand<Int, String>(bus: bus, name: "later") { n, execution in
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) {
                    execution.send("\(n * 2)")
                    execution.finish()
                }
            }
            let values = try await bounded { try await later.execute(21) }
            #expect(values == ["42"])
            #expect(!later.isExecuting)
        }

        @Test func anErrorIsPublishedWithItsMessageBeforeZero() async throws {
            let c = CCommandObserver("sync")
            defer { c.stop() }
            let order = Recorder<String>()
            let t1 = QTEventBus.shared.on(named: QTEventBus.commandExecutingTypeName).ofSubType("sync")
                .next { order.append("executing \($0.text)") }
            let t2 = QTEventBus.shared.on(named: QTEventBus.commandErrorTypeName).ofSubType("sync")
                .next { order.append("error \($0.text)") }
            defer {
                t1.dispose()
                t2.dispose()
            }
            let sync = try QTCommand<Void, String>(name: "sync") { _, execution in
                execution.send("partial")
                execution.fail("disk full")
            }
            do {
                _ = try await bounded { try await sync.execute() }
                Issue.record("the execution failed")
            } catch {
                #expect(error as? QTCommandFailure == QTCommandFailure(message: "disk full"))
            }
            #expect(order.values == ["executing 1", "error disk full", "executing 0"])
            #expect(c.errors.data == "disk full", "C reads the message text")
            #expect(c.errors.size == 9)
            #expect(c.errors.terminated)
            #expect(c.values.history == "partial|")
            #expect(c.executing.history == "1|0|")
        }

        @Test func theConcurrentFlag() throws {
            let c = CCommandObserver("fetch")
            defer { c.stop() }
            let running = Recorder<QTExecution<String>>()
            let fetch = try QTCommand<Int, String>(name: "fetch", concurrent: true) { _, execution in
                running.append(execution)
            }
            #expect(fetch.isConcurrent)
            try fetch.start(1)
            try fetch.start(2)
            try fetch.start(3)
            #expect(fetch.isExecuting)
            #expect(fetch.isEnabled, "concurrent: still enabled while executing")
            #expect(c.executing.history == "1|", "one pair however many overlap")
            let executions = running.values
            #expect(executions.count == 3)
            #expect(executions[0].finish())
            #expect(executions[2].fail("timeout"))
            #expect(fetch.isExecuting)
            #expect(c.executing.history == "1|")
            #expect(executions[1].finish())
            #expect(!fetch.isExecuting)
            #expect(c.executing.history == "1|0|")
            #expect(c.errors.history == "timeout|")
            #expect(c.enabled.count == 0, "a concurrent command never stops being enabled while it runs")
        }

        // A second finish, or a send after it, traps: MisuseTests.
        @Test func finishOnce() async throws {
            let bus = QTEventBus()
            let kept = LockedValue<QTExecution<String>?>()
            let once = try QTCommand<Void, String>(bus: bus, name: "once") { _, execution in
                #expect(execution.finish())
                kept.value = execution
            }
            let errors = Counter(), values = Counter()
            let t1 = bus.on(named: QTEventBus.commandErrorTypeName).next { _ in errors.increment() }
            let t2 = bus.on(named: QTEventBus.commandValueTypeName).next { _ in values.increment() }
            defer {
                t1.dispose()
                t2.dispose()
            }
            let none = try await bounded { try await once.execute() }
            #expect(none == [])
            #expect(errors.value == 0)
            #expect(values.value == 0)
            #expect(kept.take() != nil)
        }

        @Test func streams() async throws {
            let bus = QTEventBus()
            let job = try QTCommand<String, String>(bus: bus, name: "job") { input, execution in
                if input == "bad" {
                    execution.fail("bad input")
                } else {
                    execution.send(input.uppercased())
                    execution.finish()
                }
            }
            let values = job.values, errors = job.errors, executing = job.executingChanges, enabled = job.enabledChanges
            _ = try await bounded { try await job.execute("a") }
            _ = try? await job.execute("bad")
            try job.setEnabled(false)
            let v = await firstElements(values, 1)
            let e = await firstElements(errors, 1)
            let x = await firstElements(executing, 4)
            let n = await firstElements(enabled, 5)
            #expect(v == ["A"])
            #expect(e == ["bad input"])
            #expect(x == [true, false, true, false])
            #expect(n == [false, true, false, true, false])
        }

        @Test func cExecutesASwiftCommand() async throws {
            let got = Recorder<String>()
            let greet = try QTCommand<String, String>(name: "greet") { input, execution in
                got.append(input)
                execution.send("hello \(input)")
                execution.finish()
            }
            let c = CCommandObserver("greet")
            defer { c.stop() }
            #expect(cpeer_command_execute(greet.id, "from C") == 0)
            #expect(got.values == ["from C"], "decoded from the C input's bytes")
            #expect(c.values.history == "hello from C|")
            #expect(cpeer_command_execute(greet.id, nil) == 0, "no input: the execution starts and fails")
            #expect(c.errors.data == "qtbus: the input is not a String")
            #expect(c.executing.history == "1|0|1|0|")

            let tick = try QTCommand<Void, String>(name: "tick") { _, execution in
                execution.send("tock")
                execution.finish()
            }
            let t = CReceived(slot: cpeer_listen("QTCommandValue", "tick"))
            defer { t.stop() }
            #expect(cpeer_command_execute(tick.id, nil) == 0)
            #expect(t.history == "tock|", "a Void command takes C's empty input")
            #expect(cpeer_command_set_enabled(tick.id, 0) == 0)
            #expect(!tick.isEnabled, "C and Swift share the state")
            #expect(throws: QTBusError.busy) { try tick.start() }
        }

        @Test func disposeWhileRunning() async throws {
            let bus = QTEventBus()
            let kept = LockedValue<QTExecution<String>?>()
            let entered = Counter()
            weak var watched: Token?
            let command: QTCommand<Void, String>
            do {
                let captured = Token()
                watched = captured
                command = try QTCommand<Void, String>(bus: bus, name: "long") { _, execution in
                    _ = captured
                    kept.value = execution
                    entered.increment()
                }
            }
            let waiting = Task { try await bounded { try await command.execute() } }
            // (isExecuting turns true before the closure is called: wait for the call itself.)
            #expect(waitUntil { entered.value == 1 })
            #expect(command.isExecuting)
            command.dispose()
            #expect(!command.isExecuting, "disposed: its state is gone")
            #expect(throws: QTBusError.stale) { try command.start() }
            #expect(waitUntil { watched == nil }, "the closure is released once disposed and its call returned")
            #expect(throws: QTBusError.stale, "every call but dispose") { try command.setEnabled(false) }
            let execution = try #require(kept.take())
            #expect(!execution.send("late"), "the command is gone: nobody to send to, not a refusal")
            #expect(!execution.finish(), "later finishes do nothing")
            do {
                _ = try await bounded { try await waiting.value }
                Issue.record("the awaiting execute learns its command was disposed")
            } catch {
                #expect(error as? QTBusError == .stale)
            }
        }

        @Test func anAbandonedExecutionFails() async throws {
            let bus = QTEventBus()
            let dropper = try QTCommand<Void, String>(bus: bus, name: "dropper") { _, _ in }
            do {
                _ = try await bounded { try await dropper.execute() }
                Issue.record("nobody finished it")
            } catch {
                #expect(error as? QTCommandFailure == QTCommandFailure(message: "execution abandoned"))
            }
            #expect(!dropper.isExecuting)
        }

        @Test func asyncWork() async throws {
            struct Failure: Error, CustomStringConvertible { var description: String { "no network" } }
            let bus = QTEventBus()
            let fetch = try QTCommand<String, String>(
                bus: bus, name: "fetch",
                work: { url in
                    try await Task.sleep(nanoseconds: 1_000_000)
                    if url.isEmpty { throw Failure() }
                    return "page at \(url)"
                })
            let page = try await bounded { try await fetch.execute("qt.io") }
            #expect(page == ["page at qt.io"])
            do {
                _ = try await bounded { try await fetch.execute("") }
                Issue.record("work threw")
            } catch {
                #expect(error as? QTCommandFailure == QTCommandFailure(message: "no network"))
            }
        }
    }
}
