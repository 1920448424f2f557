// SPDX-License-Identifier: MIT
// Commands (ReactiveCocoa's RACCommand) over qtbus_command_*.
//
// A QTCommand is one engine command whose execute function is `_qtCommandExecute` and
// whose userdata is a retained `_QTCommandBody` (released by the engine's release hook,
// after dispose and the last call). Its state lives in the engine and is published on
// the bus as named events with the command's name as subtype, so C code observes a Swift
// command exactly as a C one: "QTCommandExecuting" "1"/"0", "QTCommandValue" (the value's
// bytes, QTBytesConvertible), "QTCommandError" (the message), "QTCommandEnabled".
//
// Swift's `execute(_:)` passes its input as the engine input's object, in an event cell
// (`_QTCommandInput`, keyed like typed events) together with the sink that collects this
// execution's values for the awaiting caller; an input C code passes (bytes, no Swift
// cell) is decoded when `Input` is QTBytesConvertible.
import CQtbusShims
import QTBusEngine
import Synchronization

/// A named action with observable state, ReactiveCocoa's `RACCommand`: it runs
/// `execute` with an input; while an execution runs it is executing and, unless
/// concurrent, not enabled (a second execute is refused with ``QTBusError/busy``);
/// it can be disabled; its values, errors and state changes are bus events C code sees.
///
/// Failures follow the rule of the whole API (see "Errors" in the overview): an
/// invalid name traps; what a correct program cannot prevent (the command busy, or
/// disposed by another thread or by C code) is thrown; every call on a disposed
/// command but ``dispose()`` and the state properties throws ``QTBusError/stale``.
///
/// ```swift
/// let login = try QTCommand<String, String>(name: "login") { account, execution in
///     execution.send("welcome \(account)")
///     execution.finish()
/// }
/// let values = try await login.execute("alice")      // ["welcome alice"]
/// ```
///
/// - Executions: `execute` runs on the thread that calls ``execute(_:)`` or
///   ``start(_:)``, before it returns; it sends values and finishes its
///   ``QTExecution`` then or later, from any thread (hop to a queue or start a task for
///   slow work). The command executes from the first call until the last running
///   execution finishes.
/// - Events, on ``bus`` with the command's name as subtype (several commands may share a
///   name; their events then mix): ``QTEventBus/commandExecutingTypeName`` ("1" when it
///   starts executing, "0" when it stops, one pair however many executions overlap),
///   ``QTEventBus/commandValueTypeName`` (each value's ``QTBytesConvertible/qtBytes``),
///   ``QTEventBus/commandErrorTypeName`` (a failed execution's message, before its
///   "0"), ``QTEventBus/commandEnabledTypeName`` ("1"/"0" when ``isEnabled`` changes).
///   One command's events are delivered one at a time, in order. ``values``,
///   ``errors``, ``executingChanges`` and ``enabledChanges`` are streams of them.
/// - Lifetime: the command ends with ``dispose()`` or when this object is deallocated:
///   running executions go on, but their later sends and finishes are refused, and an
///   awaiting ``execute(_:)`` then throws ``QTBusError/stale``. The closure is released
///   after the last call of it has returned.
public final class QTCommand<Input: Sendable, Output: QTBytesConvertible>: Sendable {
    /// The bus the command publishes on.
    public let bus: QTEventBus
    /// The command's name: the subtype of its events.
    public let name: String
    /// Whether executions may overlap.
    public let isConcurrent: Bool
    /// The engine command's id (`qtbus_command.id`): C code in the same process may
    /// execute, disable or dispose it through qtbus.h.
    public let id: UInt64

    /// Makes an enabled, idle command named `name` on `bus`. An invalid name
    /// (``QTEventBus/isValidName(_:)``) is a programmer error: this call traps.
    ///
    /// `execute` gets the input and the execution to send values on and to finish,
    /// exactly once (see ``QTExecution``). When C code executes the command with
    /// `qtbus_command_execute`, the input is decoded from its bytes if `Input` is
    /// ``QTBytesConvertible`` (or is `()` when C passes no input); an input that cannot
    /// be decoded fails the execution with a message saying so, without calling
    /// `execute`.
    ///
    /// - Throws: ``QTBusError/outOfMemory``.
    public init(
        bus: QTEventBus = .shared, name: String, concurrent: Bool = false,
        execute: @escaping @Sendable (Input, QTExecution<Output>) -> Void
    ) throws(QTBusError) {
        let call = "QTCommand.init(bus:name:concurrent:execute:)"
        _qtRequireName(name, .name, call)
        self.bus = bus
        self.name = name
        self.isConcurrent = concurrent
        let body = _QTCommandBody(_qtCommandRun(execute))
        let userdata = Unmanaged.passRetained(body).toOpaque()
        var command = qtbus_command(id: 0)
        let before = QTBusError.failuresSoFar
        let status = name.withCString {
            _qtbus_command_create(
                bus.raw, $0, concurrent ? UInt32(QTBUS_COMMAND_CONCURRENT) : 0,
                _qtCommandExecute, userdata, _qtCommandRelease, &command)
        }
        if status < 0 { Unmanaged<_QTCommandBody>.fromOpaque(userdata).release() }
        try _qtThrowing(status, since: before, call)
        id = command.id
    }

    /// Makes a command whose executions run `work` in a new task: its result is the
    /// execution's one value, a thrown error fails the execution with
    /// `String(describing: error)` as the message.
    ///
    /// ```swift
    /// let fetch = try QTCommand<String, String>(name: "fetch", work: { url in try await download(url) })
    /// ```
    ///
    /// An invalid name traps, as in ``init(bus:name:concurrent:execute:)``.
    public convenience init(
        bus: QTEventBus = .shared, name: String, concurrent: Bool = false,
        work: @escaping @Sendable (Input) async throws -> Output
    ) throws(QTBusError) {
        _qtRequireName(name, .name, "QTCommand.init(bus:name:concurrent:work:)")
        try self.init(bus: bus, name: name, concurrent: concurrent) { input, execution in
            Task {
                do {
                    execution.send(try await work(input))
                    execution.finish()
                } catch {
                    execution.fail(String(describing: error))
                }
            }
        }
    }

    deinit { _ = _qtbus_command_dispose(command) }

    private var command: qtbus_command { qtbus_command(id: id) }

    // MARK: Executing

    /// Executes the command with `input` and returns the values this execution sent,
    /// once it has finished.
    ///
    /// Cancelling the calling task does not stop the execution (commands have no
    /// cancellation); this call still waits for its finish.
    ///
    /// - Throws: ``QTBusError/busy`` without running anything when the command is
    ///   disabled, or executing and not concurrent; ``QTBusError/stale`` when the
    ///   command was disposed (before, or while the execution ran);
    ///   ``QTBusError/outOfMemory``; ``QTCommandFailure`` with the message when the
    ///   execution failed.
    public func execute(_ input: Input) async throws -> [Output] {
        try await withCheckedThrowingContinuation { continuation in
            let sink = _QTExecutionSink<Output>(continuation)
            let before = QTBusError.failuresSoFar
            do throws(QTBusError) {
                try _qtThrowing(_start(input, sink), since: before, "QTCommand.execute(_:)")
            } catch {
                sink.resume(throwing: error)
            }
        }
    }

    /// Starts an execution with `input` and returns (the execution may still run):
    /// fire and forget, as a button does. Observe the outcome through the events.
    ///
    /// - Throws: ``QTBusError/busy`` without running anything when the command is
    ///   disabled, or executing and not concurrent; ``QTBusError/stale`` when it was
    ///   disposed; ``QTBusError/outOfMemory``.
    public func start(_ input: Input) throws(QTBusError) {
        let before = QTBusError.failuresSoFar
        try _qtThrowing(_start(input, nil), since: before, "QTCommand.start(_:)")
    }

    private func _start(_ input: Input, _ sink: _QTExecutionSink<Output>?) -> Int32 {
        let cell = _qtMakeCell(_QTCommandInput<Input, Output>(input: input, sink: sink))
        let bytes = (input as? any QTBytesConvertible)?.qtBytes ?? []
        let status = _withNULTerminated(bytes) { base, count -> Int32 in
            return name.withCString { type in
                var desc = qtbus_event_desc(
                    type: type, subtype: nil, data: base, size: count, object: cell,
                    object_release: _qtEventCellRelease, flags: 0, headers: nil, header_count: 0)
                return _qtbus_command_execute(command, &desc, nil)
            }
        }
        // A refused execute took nothing.
        if status < 0 { _qtFreeCell(cell) }
        return status
    }

    // MARK: State

    /// Whether an execution is running (started, not finished); false once disposed.
    public var isExecuting: Bool { _qtbus_command_is_executing(command) == 1 }

    /// Whether ``execute(_:)`` would start an execution now: enabled (see
    /// ``setEnabled(_:)``), and idle unless concurrent; false once disposed.
    public var isEnabled: Bool { _qtbus_command_is_enabled(command) == 1 }

    /// Enables or disables the command. Running executions go on; a disabled command
    /// refuses to execute (``QTBusError/busy``).
    ///
    /// - Throws: ``QTBusError/stale`` when the command was disposed (by this object,
    ///   another thread, or C code through ``id``); nothing changed.
    public func setEnabled(_ enabled: Bool) throws(QTBusError) {
        let before = QTBusError.failuresSoFar
        try _qtThrowing(_qtbus_command_set_enabled(command, enabled ? 1 : 0), since: before, "QTCommand.setEnabled(_:)")
    }

    /// Ends the command (see ``QTCommand``); later calls throw ``QTBusError/stale``.
    /// Safe more than once, and after C code disposed it: the command is then already
    /// ended, which is what was asked. Also done by deinit.
    public func dispose() {
        // QTBUS_ESTALE, its only failure, says it had ended already.
        _ = _qtbus_command_dispose(command)
    }

    // MARK: Observing

    /// The values every execution of commands of this name sends, decoded as `Output`
    /// (values that do not decode are skipped), from now on: each access subscribes
    /// anew, until the consumer stops.
    public var values: AsyncStream<Output> {
        _stream(QTEventBus.commandValueTypeName) { event in event.bytes.withUnsafeBytes { Output(qtBytes: $0) } }
    }

    /// The messages of failed executions, from now on (as ``values``).
    public var errors: AsyncStream<String> {
        _stream(QTEventBus.commandErrorTypeName) { $0.text }
    }

    /// `true` when the command starts executing, `false` when it stops, from now on
    /// (as ``values``).
    public var executingChanges: AsyncStream<Bool> {
        _stream(QTEventBus.commandExecutingTypeName) { $0.text == "1" }
    }

    /// The changes of ``isEnabled``, from now on (as ``values``).
    public var enabledChanges: AsyncStream<Bool> {
        _stream(QTEventBus.commandEnabledTypeName) { $0.text == "1" }
    }

    private func _stream<T: Sendable>(_ type: String, _ transform: @escaping @Sendable (QTNamedEvent) -> T?)
        -> AsyncStream<T>
    {
        let (stream, continuation) = AsyncStream.makeStream(of: T.self)
        let token = bus.on(named: type).ofSubType(name).next { event in
            if let value = transform(event) { continuation.yield(value) }
        }
        continuation.onTermination = { _ in token.dispose() }
        return stream
    }
}

extension QTCommand where Input == Void {
    /// ``execute(_:)`` with no input.
    public func execute() async throws -> [Output] { try await execute(()) }

    /// ``start(_:)`` with no input.
    public func start() throws(QTBusError) { try start(()) }
}

/// Why an execution of a ``QTCommand`` failed: the message it finished with
/// (``QTExecution/fail(_:)`` in Swift, `qtbus_execution_finish` with an error in C), as
/// published in the command's ``QTEventBus/commandErrorTypeName`` event.
public struct QTCommandFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}

/// One running execution of a ``QTCommand``, handed to its `execute` closure: send
/// values, then finish it exactly once, now or later, from any thread.
///
/// An execution that is deallocated without finishing fails with the message
/// `"execution abandoned"`, so the command does not stay executing forever.
///
/// Misuse traps, as resuming a `CheckedContinuation` twice does: a second
/// ``finish()`` or ``fail(_:)``, or a ``send(_:)`` after either (the execution's own
/// code decides when it finishes, so a correct program never does these). A command
/// disposed while the execution runs (by another thread, or by C code) is not misuse:
/// the awaiting ``QTCommand/execute(_:)`` then throws ``QTBusError/stale``, and the
/// execution's later calls do nothing and return false, which the execution may read
/// as "stop working", as `AsyncStream.Continuation.yield` answers `.terminated`.
public final class QTExecution<Output: QTBytesConvertible>: Sendable {
    private let id: UInt64
    private let sink: _QTExecutionSink<Output>?
    private let finished = Atomic<Bool>(false)

    init(id: UInt64, sink: _QTExecutionSink<Output>?) {
        self.id = id
        self.sink = sink
    }

    deinit {
        if !finished.load(ordering: .acquiring) { fail("execution abandoned") }
    }

    /// Publishes `value` as the command's value event (its bytes, for C observers) and
    /// adds it to what the awaiting ``QTCommand/execute(_:)`` returns.
    ///
    /// Traps when the execution has finished (see ``QTExecution``).
    ///
    /// - Returns: true; false, publishing nothing, when the command was disposed
    ///   meanwhile (not a refusal: its awaiting `execute` throws
    ///   ``QTBusError/stale``).
    @discardableResult
    public func send(_ value: Output) -> Bool {
        // Recorded before it is published: a finish on another thread that follows the
        // publication must find it.
        guard !finished.load(ordering: .acquiring) else { Self.finishedAlready("send(_:)") }
        let bytes = value.qtBytes
        let slot = sink?.append(value)
        let before = QTBusError.failuresSoFar
        let status = bytes.withUnsafeBytes { _qtbus_execution_send(qtbus_execution(id: id), $0.baseAddress, $0.count) }
        guard status == 0 else {
            if let slot { sink?.drop(slot) }
            // A finish that ran meanwhile on another thread: the program's own race.
            if finished.load(ordering: .acquiring) { Self.finishedAlready("send(_:)") }
            if status != QTBUS_ESTALE.rawValue { _qtRefused("QTExecution.send(_:)", status, since: before) }
            return false
        }
        return true
    }

    /// Finishes the execution successfully: the awaiting ``QTCommand/execute(_:)``
    /// returns the values sent.
    ///
    /// Traps when the execution has finished already (see ``QTExecution``).
    ///
    /// - Returns: true; false when the command was disposed meanwhile (its awaiting
    ///   `execute` throws ``QTBusError/stale``, which is where that is reported).
    @discardableResult
    public func finish() -> Bool {
        _finish(error: nil, "finish()")
    }

    /// Finishes the execution with an error: `message` is published as the command's
    /// error event, and the awaiting ``QTCommand/execute(_:)`` throws
    /// ``QTCommandFailure``. Traps, and returns, as ``finish()`` does.
    @discardableResult
    public func fail(_ message: String) -> Bool {
        _finish(error: message, "fail(_:)")
    }

    private func _finish(error: String?, _ call: String) -> Bool {
        guard !finished.exchange(true, ordering: .acquiringAndReleasing) else { Self.finishedAlready(call) }
        let execution = qtbus_execution(id: id)
        let before = QTBusError.failuresSoFar
        let status =
            error.map { m in m.withCString { _qtbus_execution_finish(execution, 1, $0) } }
            ?? _qtbus_execution_finish(execution, 0, nil)
        if status != 0 {
            if status != QTBUS_ESTALE.rawValue { _qtRefused("QTExecution.\(call)", status, since: before) }
            sink?.resume(throwing: QTBusError(status: status, since: before) ?? .stale)
        } else if let error {
            sink?.resume(throwing: QTCommandFailure(message: error))
        } else {
            sink?.succeed()
        }
        return status == 0
    }

    private static func finishedAlready(_ call: String) -> Never {
        _qtMisuse("QTExecution.\(call)", "the execution has finished already (finish it exactly once, and send before)")
    }
}

extension QTEventBus {
    /// `QTBUS_COMMAND_EXECUTING_TYPE`: a command's executing state, `"1"` or `"0"`,
    /// subtype = its name.
    public static let commandExecutingTypeName = QTBUS_COMMAND_EXECUTING_TYPE
    /// `QTBUS_COMMAND_VALUE_TYPE`: a value a command's execution sent (its bytes).
    public static let commandValueTypeName = QTBUS_COMMAND_VALUE_TYPE
    /// `QTBUS_COMMAND_ERROR_TYPE`: a failed execution's message.
    public static let commandErrorTypeName = QTBUS_COMMAND_ERROR_TYPE
    /// `QTBUS_COMMAND_ENABLED_TYPE`: a command's enabled state, `"1"` or `"0"`.
    public static let commandEnabledTypeName = QTBUS_COMMAND_ENABLED_TYPE
}

// MARK: - Internals

/// Collects one execution's values for the `execute(_:)` awaiting them, and resumes it
/// exactly once.
final class _QTExecutionSink<Output: Sendable>: @unchecked Sendable {
    // @unchecked: `state` is only touched under its lock.
    // A value whose send the engine refused is dropped from its slot (nil), not
    // removed: other threads may have appended after it.
    private let state: _QTLocked<(values: [Output?], continuation: CheckedContinuation<[Output], Error>?)>

    init(_ continuation: CheckedContinuation<[Output], Error>) {
        state = _QTLocked(([], continuation))
    }

    /// Records `value` (before its event is published); returns its slot.
    func append(_ value: Output) -> Int {
        state.withLock { s in
            s.values.append(value)
            return s.values.count - 1
        }
    }

    func drop(_ slot: Int) { state.withLock { $0.values[slot] = nil } }

    func succeed() {
        let (values, continuation) = state.withLock { s in
            defer { s.continuation = nil }
            return (s.values.compactMap { $0 }, s.continuation)
        }
        continuation?.resume(returning: values)
    }

    func resume(throwing error: any Error) {
        let continuation = state.withLock { s in
            defer { s.continuation = nil }
            return s.continuation
        }
        continuation?.resume(throwing: error)
    }
}

/// What `execute(_:)` passes as the engine input's object (an event cell): the input and
/// the caller's sink.
struct _QTCommandInput<Input: Sendable, Output: QTBytesConvertible>: QTEvent {
    let input: Input
    let sink: _QTExecutionSink<Output>?
}

/// The engine's userdata for one command.
final class _QTCommandBody: @unchecked Sendable {
    // @unchecked: immutable after init.
    let run: @Sendable (OpaquePointer?, qtbus_execution) -> Void
    init(_ run: @escaping @Sendable (OpaquePointer?, qtbus_execution) -> Void) { self.run = run }
}

/// Builds the engine-facing body of a command: finds the input (Swift cell, C bytes, or
/// none) and runs `execute`.
func _qtCommandRun<Input: Sendable, Output: QTBytesConvertible>(
    _ execute: @escaping @Sendable (Input, QTExecution<Output>) -> Void
) -> @Sendable (OpaquePointer?, qtbus_execution) -> Void {
    let key = UInt(bitPattern: ObjectIdentifier(_QTCommandInput<Input, Output>.self))
    return { event, execution in
        var input: Input? = nil
        var sink: _QTExecutionSink<Output>? = nil
        if let event {
            if let cell = _qtbus_event_object(event), cell.load(as: UInt.self) == key {
                let value = (cell + _qtCellValueOffset(_QTCommandInput<Input, Output>.self))
                    .assumingMemoryBound(to: _QTCommandInput<Input, Output>.self).pointee
                input = value.input
                sink = value.sink
            } else if let bytesType = Input.self as? any QTBytesConvertible.Type {
                var size = 0
                let data = _qtbus_event_data(event, &size)
                input = bytesType.init(qtBytes: UnsafeRawBufferPointer(start: data, count: size)) as? Input
            }
        } else {
            input = () as? Input
        }
        let handle = QTExecution<Output>(id: execution.id, sink: sink)
        guard let input else {
            handle.fail("qtbus: the input is not a \(Input.self)")
            return
        }
        execute(input, handle)
    }
}

let _qtCommandExecute: qtbus_execute_fn = { input, execution, userdata in
    // Borrowed: the engine keeps the userdata until its release hook, after this call.
    Unmanaged<_QTCommandBody>.fromOpaque(userdata.unsafelyUnwrapped)._withUnsafeGuaranteedRef {
        $0.run(input, execution)
    }
}

let _qtCommandRelease: qtbus_release = { userdata in
    Unmanaged<_QTCommandBody>.fromOpaque(userdata.unsafelyUnwrapped).release()
}
