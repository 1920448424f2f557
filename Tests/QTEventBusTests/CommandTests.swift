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
import XCTest

final class CommandTests: XCTestCase {

    func testTheFullLifeAsCSeesIt() async throws {
        let c = CCommandObserver("save")
        defer { c.stop() }
        let states = Recorder<String>()
        let me = LockedValue<QTCommand<String, String>?>()
        let save = try QTCommand<String, String>(name: "save") { input, execution in
            if let me = me.value {  // during the execution, as Swift and C see it
                states.append("executing \(me.isExecuting) enabled \(me.isEnabled) C \(cpeer_command_is_executing(me.id))")
            }
            execution.send("\(input)-a")
            execution.send("\(input)-b")
            execution.finish()
        }
        XCTAssertTrue(save.isEnabled)
        XCTAssertFalse(save.isExecuting)

        me.value = save
        let values = try await bounded { try await save.execute("doc") }
        XCTAssertEqual(states.values, ["executing true enabled false C 1"])
        XCTAssertEqual(values, ["doc-a", "doc-b"], "this execution's values")
        XCTAssertEqual(c.executing.history, "1|0|", "executing 1 then 0")
        XCTAssertEqual(c.values.history, "doc-a|doc-b|", "values as their bytes")
        XCTAssertTrue(c.values.terminated)
        XCTAssertEqual(c.enabled.history, "0|1|", "not enabled while executing, then enabled")
        XCTAssertEqual(c.errors.count, 0)
        XCTAssertFalse(save.isExecuting)
        XCTAssertTrue(save.isEnabled)

        save.setEnabled(false)
        XCTAssertFalse(save.isEnabled)
        XCTAssertEqual(c.enabled.history, "0|1|0|")
        do {
            _ = try await bounded { try await save.execute("no") }
            XCTFail("a disabled command executes nothing")
        } catch {
            XCTAssertEqual(error as? QTBusError, .busy)
        }
        XCTAssertThrowsError(try save.start("no")) { XCTAssertEqual($0 as? QTBusError, .busy) }
        XCTAssertEqual(c.executing.history, "1|0|", "refused: nothing ran")
        save.setEnabled(true)
        XCTAssertEqual(c.enabled.history, "0|1|0|1|")
        let again = try await bounded { try await save.execute("again") }
        XCTAssertEqual(again, ["again-a", "again-b"])
        XCTAssertEqual(c.executing.history, "1|0|1|0|")
    }

    func testNotEnabledWhileExecutingAndASecondExecuteIsBusy() async throws {
        let bus = QTEventBus()
        let running = LockedValue<QTExecution<String>?>()
        let upload = try QTCommand<Int, String>(bus: bus, name: "upload") { n, execution in
            execution.send("started \(n)")
            running.value = execution  // finishes later
        }
        try upload.start(1)
        XCTAssertTrue(upload.isExecuting)
        XCTAssertFalse(upload.isEnabled, "not concurrent: busy while executing")
        XCTAssertThrowsError(try upload.start(2)) { XCTAssertEqual($0 as? QTBusError, .busy) }
        do {
            _ = try await bounded { try await upload.execute(3) }
            XCTFail("a second execute while running is refused")
        } catch {
            XCTAssertEqual(error as? QTBusError, .busy)
        }
        let execution = try XCTUnwrap(running.take())
        XCTAssertTrue(execution.finish())
        XCTAssertFalse(upload.isExecuting)
        XCTAssertTrue(upload.isEnabled)
        // The awaiting form, finished from another thread.
        let later = try QTCommand<Int, String>(bus: bus, name: "later") { n, execution in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(10)) {
                execution.send("\(n * 2)")
                execution.finish()
            }
        }
        let values = try await bounded { try await later.execute(21) }
        XCTAssertEqual(values, ["42"])
        XCTAssertFalse(later.isExecuting)
    }

    func testAnErrorIsPublishedWithItsMessageBeforeZero() async throws {
        let c = CCommandObserver("sync")
        defer { c.stop() }
        let order = Recorder<String>()
        let t1 = QTEventBus.shared.on(named: QTEventBus.commandExecutingTypeName).ofSubType("sync")
            .next { order.append("executing \($0.text)") }
        let t2 = QTEventBus.shared.on(named: QTEventBus.commandErrorTypeName).ofSubType("sync")
            .next { order.append("error \($0.text)") }
        defer { t1.dispose(); t2.dispose() }
        let sync = try QTCommand<Void, String>(name: "sync") { _, execution in
            execution.send("partial")
            execution.fail("disk full")
        }
        do {
            _ = try await bounded { try await sync.execute() }
            XCTFail("the execution failed")
        } catch {
            XCTAssertEqual(error as? QTCommandFailure, QTCommandFailure(message: "disk full"))
        }
        XCTAssertEqual(order.values, ["executing 1", "error disk full", "executing 0"])
        XCTAssertEqual(c.errors.data, "disk full", "C reads the message text")
        XCTAssertEqual(c.errors.size, 9)
        XCTAssertTrue(c.errors.terminated)
        XCTAssertEqual(c.values.history, "partial|")
        XCTAssertEqual(c.executing.history, "1|0|")
    }

    func testTheConcurrentFlag() throws {
        let c = CCommandObserver("fetch")
        defer { c.stop() }
        let running = Recorder<QTExecution<String>>()
        let fetch = try QTCommand<Int, String>(name: "fetch", concurrent: true) { _, execution in
            running.append(execution)
        }
        XCTAssertTrue(fetch.isConcurrent)
        try fetch.start(1)
        try fetch.start(2)
        try fetch.start(3)
        XCTAssertTrue(fetch.isExecuting)
        XCTAssertTrue(fetch.isEnabled, "concurrent: still enabled while executing")
        XCTAssertEqual(c.executing.history, "1|", "one pair however many overlap")
        let executions = running.values
        XCTAssertEqual(executions.count, 3)
        XCTAssertTrue(executions[0].finish())
        XCTAssertTrue(executions[2].fail("timeout"))
        XCTAssertTrue(fetch.isExecuting)
        XCTAssertEqual(c.executing.history, "1|")
        XCTAssertTrue(executions[1].finish())
        XCTAssertFalse(fetch.isExecuting)
        XCTAssertEqual(c.executing.history, "1|0|")
        XCTAssertEqual(c.errors.history, "timeout|")
        XCTAssertEqual(c.enabled.count, 0, "a concurrent command never stops being enabled while it runs")
    }

    func testDoubleFinish() async throws {
        let bus = QTEventBus()
        let kept = LockedValue<QTExecution<String>?>()
        let once = try QTCommand<Void, String>(bus: bus, name: "once") { _, execution in
            XCTAssertTrue(execution.finish())
            XCTAssertFalse(execution.finish(), "only the first finish counts")
            XCTAssertFalse(execution.fail("too late"))
            XCTAssertFalse(execution.send("too late"), "no value after the finish")
            kept.value = execution
        }
        let errors = Counter(), values = Counter()
        let t1 = bus.on(named: QTEventBus.commandErrorTypeName).next { _ in errors.increment() }
        let t2 = bus.on(named: QTEventBus.commandValueTypeName).next { _ in values.increment() }
        defer { t1.dispose(); t2.dispose() }
        let none = try await bounded { try await once.execute() }
        XCTAssertEqual(none, [])
        XCTAssertEqual(errors.value, 0)
        XCTAssertEqual(values.value, 0)
        XCTAssertNotNil(kept.take())
    }

    func testStreams() async throws {
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
        job.setEnabled(false)
        let v = await firstElements(values, 1)
        let e = await firstElements(errors, 1)
        let x = await firstElements(executing, 4)
        let n = await firstElements(enabled, 5)
        XCTAssertEqual(v, ["A"])
        XCTAssertEqual(e, ["bad input"])
        XCTAssertEqual(x, [true, false, true, false])
        XCTAssertEqual(n, [false, true, false, true, false])
    }

    func testCExecutesASwiftCommand() async throws {
        let got = Recorder<String>()
        let greet = try QTCommand<String, String>(name: "greet") { input, execution in
            got.append(input)
            execution.send("hello \(input)")
            execution.finish()
        }
        let c = CCommandObserver("greet")
        defer { c.stop() }
        XCTAssertEqual(cpeer_command_execute(greet.id, "from C"), 0)
        XCTAssertEqual(got.values, ["from C"], "decoded from the C input's bytes")
        XCTAssertEqual(c.values.history, "hello from C|")
        XCTAssertEqual(cpeer_command_execute(greet.id, nil), 0, "no input: the execution starts and fails")
        XCTAssertEqual(c.errors.data, "qtbus: the input is not a String")
        XCTAssertEqual(c.executing.history, "1|0|1|0|")

        let tick = try QTCommand<Void, String>(name: "tick") { _, execution in
            execution.send("tock")
            execution.finish()
        }
        let t = CReceived(slot: cpeer_listen("QTCommandValue", "tick"))
        defer { t.stop() }
        XCTAssertEqual(cpeer_command_execute(tick.id, nil), 0)
        XCTAssertEqual(t.history, "tock|", "a Void command takes C's empty input")
        XCTAssertEqual(cpeer_command_set_enabled(tick.id, 0), 0)
        XCTAssertFalse(tick.isEnabled, "C and Swift share the state")
        XCTAssertThrowsError(try tick.start()) { XCTAssertEqual($0 as? QTBusError, .busy) }
    }

    func testDisposeWhileRunning() async throws {
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
        XCTAssertTrue(waitUntil { entered.value == 1 })
        XCTAssertTrue(command.isExecuting)
        command.dispose()
        XCTAssertFalse(command.isExecuting, "disposed: its state is gone")
        XCTAssertThrowsError(try command.start()) { XCTAssertEqual($0 as? QTBusError, .stale) }
        XCTAssertTrue(waitUntil { watched == nil }, "the closure is released once disposed and its call returned")
        let execution = try XCTUnwrap(kept.take())
        XCTAssertFalse(execution.send("late"))
        XCTAssertFalse(execution.finish(), "later finishes are refused")
        do {
            _ = try await bounded { try await waiting.value }
            XCTFail("the awaiting execute learns its command was disposed")
        } catch {
            XCTAssertEqual(error as? QTBusError, .stale)
        }
    }

    func testAnAbandonedExecutionFails() async throws {
        let bus = QTEventBus()
        let dropper = try QTCommand<Void, String>(bus: bus, name: "dropper") { _, _ in }
        do {
            _ = try await bounded { try await dropper.execute() }
            XCTFail("nobody finished it")
        } catch {
            XCTAssertEqual(error as? QTCommandFailure, QTCommandFailure(message: "execution abandoned"))
        }
        XCTAssertFalse(dropper.isExecuting)
    }

    func testAsyncWork() async throws {
        struct Failure: Error, CustomStringConvertible { var description: String { "no network" } }
        let bus = QTEventBus()
        let fetch = try QTCommand<String, String>(bus: bus, name: "fetch", work: { url in
            try await Task.sleep(nanoseconds: 1_000_000)
            if url.isEmpty { throw Failure() }
            return "page at \(url)"
        })
        let page = try await bounded { try await fetch.execute("qt.io") }
        XCTAssertEqual(page, ["page at qt.io"])
        do {
            _ = try await bounded { try await fetch.execute("") }
            XCTFail("work threw")
        } catch {
            XCTAssertEqual(error as? QTCommandFailure, QTCommandFailure(message: "no network"))
        }
    }

    func testInvalidNames() {
        XCTAssertThrowsError(try QTCommand<Void, String>(bus: QTEventBus(), name: "") { _, e in e.finish() }) {
            XCTAssertEqual($0 as? QTBusError, .invalidArgument)
        }
    }
}
