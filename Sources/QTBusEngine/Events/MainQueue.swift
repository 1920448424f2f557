// SPDX-License-Identifier: MIT
// The main queue: libdispatch's own, the queue Swift calls DispatchQueue.main.  A C
// program pumps it through the eventfd that libdispatch pokes when main-queue work is
// posted (qtbus_main_fd / _drain / _wait).
import CQtbusShims
import CQtbusLibc

/// Never freed; its only mutable field (refs) is not used for the main queue.  Made on
/// first use (qtbus_queue_main(), which never returns NULL): out of memory there waits
/// for memory (Swift's `allocate` does not survive failing).
nonisolated(unsafe) let mainQueue: UnsafeMutablePointer<Queue> = {
    qtshim_engine_used()
    // Make libdispatch create the main queue's eventfd now: work posted before it
    // exists would not make it readable.
    _ = qtshim_main_queue_fd()
    let q = allocateWaiting(Queue.self)
    q.initialize(to: Queue(dq: qtshim_dq_main()!, isMain: true, batched: false))
    return q
}()

/// Main-queue work items run by the current drain (touched on the main thread only).
nonisolated(unsafe) var mainWorkRun: Int32 = 0

@inline(__always)
func countIfMain(_ isMain: Bool) {
    if isMain && qtshim_is_main_thread() { mainWorkRun &+= 1 }
}

// MARK: - Main queue pump

func mainDrain() -> Int32 {
    guard qtshim_is_main_thread() else {
        return fail(QTBUS_EINVAL, "called on a thread other than the process's main thread")
    }
    _ = mainQueue
    // Saved and restored so a main-queue handler that drains again counts correctly.
    let outer = mainWorkRun
    mainWorkRun = 0
    qtshim_main_queue_run()
    let n = mainWorkRun
    mainWorkRun = outer &+ n
    return n
}

func mainWait(_ timeoutMs: Int32) -> Int32 {
    guard qtshim_is_main_thread() else {
        return fail(QTBUS_EINVAL, "called on a thread other than the process's main thread")
    }
    _ = mainQueue
    if qtshim_main_queue_poll(timeoutMs) <= 0 { return 0 }
    return mainDrain()
}
