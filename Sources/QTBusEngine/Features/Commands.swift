// SPDX-License-Identifier: MIT
// Commands (ReactiveCocoa's RACCommand) and their executions.
//
// A command is a C function plus state under the registry lock: enabled, how many
// executions run, how many calls of the function are running or queued.  Its state
// changes are published on its bus as events whose subtype is the command's name:
// QTCommandExecuting "1"/"0", QTCommandValue (each send), QTCommandError (a failed
// finish, before its "0") and QTCommandEnabled "1"/"0".
//
// Why publications go through a per-command FIFO: the state changes under the lock,
// but handlers must run outside it, so two threads (one finishing the last execution,
// one starting a new one) could deliver "1" before "0" and leave every observer
// believing the command idle while it runs.  Each change appends its events to the
// FIFO in the critical section that made it; the thread that finds nobody publishing
// becomes the publisher and delivers the FIFO in order until it is empty.  A handler
// that executes the command again (re-entrant, same thread) only appends: the loop up
// its stack delivers the new events after the current one, so nothing deadlocks and
// nothing runs under a lock.  Normally the caller itself is the publisher, so a
// single-threaded program sees every event inside the call that caused it.
//
// Memory: `refs` counts the handle table's entry plus every call of `execute` that is
// running or queued.  When the command is disposed and the last call returned, the
// record is retired through the reclaimer (callers hold its pointer inside an epoch)
// and release(userdata) runs.  Execution ids live in their own handle table, pointing
// at the command; dispose removes them all, so later sends and finishes are ESTALE.
import CQtbusShims
import CQtbusLibc

struct Command {
    /// Under the registry lock, as every field but the constants (first: see `field(_:)`).
    var refs = 1
    var running = 0
    var enabled = true
    var disposed = false
    /// What QTCommandEnabled last said (it starts enabled, and says nothing until a change).
    var effectiveEnabled = true
    var publishing = false
    var pending = Vector<UnsafeMutablePointer<Payload>>()
    var executions = Vector<UInt64>()
    let id: UInt64
    let bus: UnsafeMutablePointer<Bus>
    let name: StoredName
    let concurrent: Bool
    let execute: qtbus_execute_fn
    let userdata: UnsafeMutableRawPointer?
    let release: qtbus_release?
}

let commandExecutingName = StaticName(qtshim_command_executing_type())
let commandValueName = StaticName(qtshim_command_value_type())
let commandErrorName = StaticName(qtshim_command_error_type())
let commandEnabledName = StaticName(qtshim_command_enabled_type())
private let oneText: StaticString = "1"
private let zeroText: StaticString = "0"

// MARK: - Publications

extension UnsafeMutablePointer where Pointee == Command {
    /// Under the registry lock: appends one event to the FIFO.  The change it reports
    /// happened, so its event waits for memory if it must.
    fileprivate func append(_ type: StaticName, _ data: UnsafeRawPointer?, _ size: Int) {
        let subtype = CName(UnsafePointer(pointee.name.bytes))!
        pointee.pending.append(
            makePayloadWaiting(
                type: type.name, subtype: subtype, data: data, size: size,
                object: nil, objectRelease: nil, parent: nil))
    }

    fileprivate func append(_ type: StaticName, flag: Bool) {
        let text = flag ? oneText : zeroText
        append(type, text.utf8Start, 1)
    }

    /// Under the registry lock, after `running` or `enabled` changed: the executing and
    /// enabled events that change calls for.
    fileprivate func noteState(wasRunning: Int) {
        if wasRunning == 0 && pointee.running > 0 { append(commandExecutingName, flag: true) }
        if wasRunning > 0 && pointee.running == 0 { append(commandExecutingName, flag: false) }
        let effective = pointee.enabled && (pointee.concurrent || pointee.running == 0)
        if effective != pointee.effectiveEnabled {
            pointee.effectiveEnabled = effective
            append(commandEnabledName, flag: effective)
        }
    }

    /// Under the registry lock: when events are pending and nobody is delivering them,
    /// this caller becomes the publisher and delivers them after the unlock.
    fileprivate func claimPublisher(_ after: inout AfterUnlock) {
        guard !pointee.pending.isEmpty, !pointee.publishing else { return }
        pointee.publishing = true
        after.call(publishPending, UnsafeMutableRawPointer(self))
    }

    /// Outside the lock, inside an epoch: delivers the FIFO until it is empty.
    fileprivate func publish() {
        while true {
            let next: UnsafeMutablePointer<Payload>? = withRegistry { _, _ in
                if pointee.pending.isEmpty {
                    pointee.publishing = false
                    return nil
                }
                return pointee.pending.removeFirst()
            }
            guard let p = next else { return }
            var event = Outgoing(payload: p)
            handlingEvent(event.headers) {
                if dispatchEvent(pointee.bus, &event, flags: 0) < 0 { p.release() }
            }
        }
    }
}

/// Publications are dispatches: a dispatch section (the caller's may be a memory one).
private let publishPending: Finalizer = { raw in withEpoch { raw!.assumingMemoryBound(to: Command.self).publish() } }

/// Drops one reference (a finished call, or the table's at dispose); under the lock.
/// The last one retires the record after the unlock.
private func dropCommandRef(_ c: UnsafeMutablePointer<Command>, _ after: inout AfterUnlock) {
    c.pointee.refs -= 1
    if c.pointee.refs == 0 { after.retire(UnsafeMutableRawPointer(c), finalizeCommand) }
}

private let finalizeCommand: Finalizer = { raw in
    let c = raw!.assumingMemoryBound(to: Command.self)
    let release = c.pointee.release
    let userdata = c.pointee.userdata
    c.pointee.name.free()
    c.pointee.pending.free()
    c.pointee.executions.free()
    c.deinitialize(count: 1)
    free(c)
    release?(userdata)
}

// MARK: - Entry points

func makeCommand(
    _ bus: UnsafeMutablePointer<Bus>, _ name: CName, concurrent: Bool, _ execute: qtbus_execute_fn,
    _ userdata: UnsafeMutableRawPointer?, _ release: qtbus_release?
) -> Int64 {
    withMemoryEpoch {
        withRegistry { state, _ in
            if isClosed(bus) { return Int64(failClosed()) }
            guard let c = tryAllocate(Command.self) else { return Int64(QTBUS_ENOMEM.rawValue) }
            guard let stored = StoredName(copying: name), bus.pointee.commands.reserve(1) else {
                free(c)
                return Int64(QTBUS_ENOMEM.rawValue)
            }
            // The id is known only after insertion; the slot is reserved with the pointer.
            let id = state.commands.insert(c)
            guard id != 0 else {
                stored.free()
                free(c)
                return Int64(QTBUS_ENOMEM.rawValue)
            }
            c.initialize(
                to: Command(
                    id: id, bus: bus, name: stored, concurrent: concurrent,
                    execute: execute, userdata: userdata, release: release))
            bus.pointee.commands.appendReserved(id)
            return Int64(bitPattern: id)
        }
    }
}

/// qtbus_command_execute.  `input` was checked by the caller; it is consumed (its
/// object released) only when this returns QTBUS_OK.
func executeCommand(_ id: UInt64, _ input: inout Outgoing?, _ queue: UnsafeMutablePointer<Queue>?) -> Int32 {
    withMemoryEpoch {
        var status = QTBUS_OK.rawValue
        var executionID: UInt64 = 0
        // What a queued execution needs, before anything changes.
        var item: UnsafeMutablePointer<QueuedExecution>? = nil
        if queue != nil {
            item = tryAllocate(QueuedExecution.self)
            if item == nil { return QTBUS_ENOMEM.rawValue }
        }
        // Pending publications are delivered at the unlock, before the call below.
        let found: UnsafeMutablePointer<Command>? = withRegistry { state, after in
            guard let c = state.commands.lookup(id) else {
                status = fail(QTBUS_ESTALE, "the command is disposed or was never made")
                return nil
            }
            if isClosed(c.pointee.bus) {
                status = failClosed()
                return nil
            }
            guard c.pointee.enabled, c.pointee.concurrent || c.pointee.running == 0 else {
                status = QTBUS_EBUSY.rawValue
                return nil
            }
            guard c.pointee.executions.reserve(1) else {
                status = QTBUS_ENOMEM.rawValue
                return nil
            }
            executionID = state.executions.insert(c)
            guard executionID != 0 else {
                status = QTBUS_ENOMEM.rawValue
                return nil
            }
            let was = c.pointee.running
            c.pointee.running += 1
            c.pointee.refs += 1
            c.pointee.executions.appendReserved(executionID)
            c.noteState(wasRunning: was)
            c.claimPublisher(&after)
            return c
        }
        guard let c = found else {
            free(item)
            return status
        }
        let execution = qtbus_execution(id: executionID)
        if let queue, let item {
            // The input outlives this call: copy it once (the payload takes the object).
            // The execution was accepted, so the copy waits for memory if it must.
            var payload: UnsafeMutablePointer<Payload>? = nil
            if var event = input {
                event.ensurePayload()
                payload = event.payload
            }
            postExecution(item, c, execution, payload, queue)
        } else if var event = input {
            var view = EventView(event)
            view.queued = true  // not a dispatch: it cannot be stopped
            handlingEvent(view.headers) {
                withUnsafeMutablePointer(to: &view) {
                    c.pointee.execute(OpaquePointer($0), execution, c.pointee.userdata)
                }
            }
            event.finish()
            endCall(c)
        } else {
            c.pointee.execute(nil, execution, c.pointee.userdata)
            endCall(c)
        }
        return QTBUS_OK.rawValue
    }
}

/// A call of `execute` has returned (or was dropped): drops its reference.
private func endCall(_ c: UnsafeMutablePointer<Command>) {
    withRegistry { _, after in dropCommandRef(c, &after) }
}

private struct QueuedExecution {
    let command: UnsafeMutablePointer<Command>
    let execution: qtbus_execution
    let input: UnsafeMutablePointer<Payload>?
    /// Counted by qtbus_main_drain when it runs on the main queue.
    let isMain: Bool
}

/// Runs `execute` on `queue` later, unless the command is disposed by then.
private func postExecution(
    _ item: UnsafeMutablePointer<QueuedExecution>, _ c: UnsafeMutablePointer<Command>,
    _ execution: qtbus_execution, _ input: UnsafeMutablePointer<Payload>?,
    _ queue: UnsafeMutablePointer<Queue>
) {
    item.initialize(
        to: QueuedExecution(
            command: c, execution: execution, input: input,
            isMain: queue.pointee.isMain))
    // The queue may be released by its creator meanwhile: work already submitted keeps
    // it alive (see `submit`).
    submit(queue, context: item) { raw in
        let item = raw!.assumingMemoryBound(to: QueuedExecution.self).move()
        free(raw)
        let c = item.command
        // Its reference keeps the record; the lock orders this read with dispose.
        if !withRegistry({ _, _ in c.pointee.disposed }) {
            if let p = item.input {
                var view = EventView(payload: p, queued: true)
                handlingEvent(view.headers) {
                    withUnsafeMutablePointer(to: &view) {
                        c.pointee.execute(OpaquePointer($0), item.execution, c.pointee.userdata)
                    }
                }
            } else {
                c.pointee.execute(nil, item.execution, c.pointee.userdata)
            }
        }
        if let p = item.input { p.release() }
        endCall(c)
        countIfMain(item.isMain)
    }
}

/// The shape of every call that changes a command's state after creation: under the
/// registry lock `change` finds the command (nil: QTBUS_ESTALE) and appends the events
/// the change makes; after unlocking, this thread delivers them if nobody else is.
private func changeCommand(_ change: (inout RegistryState) -> UnsafeMutablePointer<Command>?) -> Int32 {
    withEpoch {
        withRegistry { state, after in
            guard let c = change(&state) else {
                return fail(QTBUS_ESTALE, "the command or execution is over, disposed or was never made")
            }
            c.claimPublisher(&after)
            return QTBUS_OK.rawValue
        }
    }
}

func setCommandEnabled(_ id: UInt64, _ enabled: Bool) -> Int32 {
    changeCommand { state in
        guard let c = state.commands.lookup(id) else { return nil }
        c.pointee.enabled = enabled
        c.noteState(wasRunning: c.pointee.running)
        return c
    }
}

/// 1 or 0 for `running > 0` (`executing: true`) or for "execute would be accepted now".
func queryCommand(_ id: UInt64, executing: Bool) -> Int32 {
    withRegistry { state, _ in
        guard let c = state.commands.lookup(id) else {
            return fail(QTBUS_ESTALE, "the command is disposed or was never made")
        }
        if executing { return c.pointee.running > 0 ? 1 : 0 }
        return c.pointee.enabled && (c.pointee.concurrent || c.pointee.running == 0) ? 1 : 0
    }
}

func sendFromExecution(_ id: UInt64, _ data: UnsafeRawPointer?, _ size: Int) -> Int32 {
    changeCommand { state in
        guard let c = state.executions.lookup(id) else { return nil }
        c.append(commandValueName, data, size)
        return c
    }
}

func finishExecution(_ id: UInt64, _ error: Int32, _ message: UnsafePointer<CChar>?) -> Int32 {
    changeCommand { state in
        guard let c = state.executions.remove(id) else { return nil }
        c.pointee.executions.removeFirst { $0 == id }
        if error != 0 {
            let length = message.map { strlen($0) } ?? 0
            c.append(commandErrorName, message.map { UnsafeRawPointer($0) }, length)
        }
        let was = c.pointee.running
        c.pointee.running -= 1
        c.noteState(wasRunning: was)
        return c
    }
}

/// Under the registry lock: takes the command out of the tables (its executions too)
/// and drops the table's reference.
func disposeCommandLocked(
    _ state: inout RegistryState, _ c: UnsafeMutablePointer<Command>,
    _ after: inout AfterUnlock
) {
    state.commands.remove(c.pointee.id)
    c.pointee.executions.forEach { state.executions.remove($0) }
    c.pointee.executions.free()
    c.pointee.disposed = true
    let bus = c.pointee.bus
    bus.pointee.commands.removeFirst { $0 == c.pointee.id }
    dropCommandRef(c, &after)
}

func disposeCommand(_ id: UInt64) -> Int32 {
    withRegistry { state, after in
        guard let c = state.commands.lookup(id) else {
            return fail(QTBUS_ESTALE, "the command is disposed or was never made")
        }
        disposeCommandLocked(&state, c, &after)
        return QTBUS_OK.rawValue
    }
}
