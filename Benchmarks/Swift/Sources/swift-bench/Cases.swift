// SPDX-License-Identifier: MIT
// The driver: calibration, interleaved repetitions, and the five cases.
import BenchSupport
import Foundation
import QTEventBus

/// Runs `n` operations and returns the seconds they took (checking closure counts).
typealias Measure = (UInt64) -> Double

final class Driver {
    let opt: Options
    let machine: Machine
    private(set) var rows: [Row] = []
    var otherCPUShare = 0.0
    var wallSeconds = 0.0

    init(options: Options, machine: Machine) {
        self.opt = options
        self.machine = machine
    }

    func version(_ column: Column) -> String {
        switch column {
        case .qtbus: String(cString: qtbus_version())
        default: opt.libraryVersions[column.key] ?? "-"
        }
    }

    func row(_ id: String) -> Row? { rows.first { $0.id == id } }

    private func newRow(_ id: String, _ title: String, _ unit: String, better: String = "lower") -> Row {
        let r = Row(id: id, title: title, unit: unit, better: better)
        rows.append(r)
        return r
    }

    // MARK: Calibration and interleaved repetitions

    /// An operation count with which one repetition lasts at least opt.repSeconds: the
    /// count returned is one that was measured to last that long.
    ///
    /// A first run is thrown away: first-use costs (a queue's thread starting, caches,
    /// lazily made tables) can make it many times slower than the rest, and a count
    /// extrapolated from it alone gave 1 ms repetitions (the queued stream row).
    private func calibrate(_ f: Measure, start: UInt64) -> UInt64 {
        let target = opt.repSeconds
        let t0 = f(start)
        if opt.verbose {
            print(String(format: "  calibrate: %llu operations, %.3f ms (first run, not used)", start, t0 * 1e3))
        }
        var n = start
        while true {
            let t = f(n)
            if opt.verbose { print(String(format: "  calibrate: %llu operations, %.3f ms", n, t * 1e3)) }
            if t >= target || n >= 1 << 40 { return n }
            let grow = t < target * 0.02 ? 10 : target * 1.15 / Swift.max(t, 1e-9)
            n = Swift.max(n + 1, UInt64(Double(n) * grow))
        }
    }

    /// The per-operation cost in ns for every subject, the subjects interleaved within
    /// each repetition.
    private func runInterleaved(_ r: Row, _ subjects: [(column: Column, measure: Measure, start: UInt64)]) {
        for s in subjects { r[s.column].iterations = calibrate(s.measure, start: s.start) }
        for _ in 0..<opt.reps {
            for s in subjects {
                let n = r[s.column].iterations
                let t = s.measure(n)
                r[s.column].reps.append(t * 1e9 / Double(n))
            }
        }
    }

    // MARK: 1. dispatch

    func caseDispatch(handlers: Int) {
        let r = newRow("dispatch_\(handlers)", "dispatch, \(handlers) closure\(handlers == 1 ? "" : "s")", "ns")
        r.handlers = handlers
        r.peerRow = true
        var libraries: [(Column, any BenchLibrary)] = []
        var subjects: [(column: Column, measure: Measure, start: UInt64)] = []
        for (column, make) in Column.libraries {
            let lib = make()
            lib.connect(handlers)
            libraries.append((column, lib))
            subjects.append(
                (
                    column,
                    { n in
                        bench_count_reset()
                        let t0 = bench_now()
                        lib.dispatch(n)
                        let t = bench_now() - t0
                        expectCount(column, "dispatch", bench_count(), n * UInt64(handlers))
                        return t
                    }, 64
                ))
        }
        runInterleaved(r, subjects)
        for (_, lib) in libraries { lib.disconnectAll() }
    }

    /// What `freeWith` costs a dispatch: 10 closures whose owner lives, so each is asked
    /// about its owner and then called, beside the limit doing the same check (a weak
    /// load before each call of the closure array).  The peers have no freeWith.
    func caseDispatchFreeWith() {
        let r = newRow("dispatch_10_freewith", "dispatch, 10 freeWith closures", "ns")
        r.handlers = 10
        let owner = BenchOwner()
        let qtbus = QtbusLibrary(), limit = ClosureArrayLibrary()
        qtbus.owner = owner
        limit.owner = owner
        var subjects: [(column: Column, measure: Measure, start: UInt64)] = []
        for (column, lib) in [(Column.qtbus, qtbus as any BenchLibrary), (.limit, limit)] {
            lib.connect(10)
            subjects.append(
                (
                    column,
                    { n in
                        bench_count_reset()
                        let t0 = bench_now()
                        lib.dispatch(n)
                        let t = bench_now() - t0
                        expectCount(column, "dispatch (freeWith)", bench_count(), n * 10)
                        return t
                    }, 64
                ))
        }
        r[.notificationCenter].na = "n/a (no freeWith)"
        r[.openCombine].na = "n/a (no freeWith)"
        runInterleaved(r, subjects)
        qtbus.disconnectAll()
        limit.disconnectAll()
        withExtendedLifetime(owner) {}
    }

    // MARK: 2. subscribe + dispose with 100 others present

    func caseSubscribeDispose() {
        let r = newRow("subscribe_dispose", "subscribe+dispose, 100 present", "ns")
        r.peerRow = true
        var libraries: [(Column, any BenchLibrary)] = []
        var subjects: [(column: Column, measure: Measure, start: UInt64)] = []
        for (column, make) in Column.libraries {
            let lib = make()
            lib.connect(100)
            libraries.append((column, lib))
            subjects.append(
                (
                    column,
                    { n in
                        let t0 = bench_now()
                        lib.subscribeDispose(n)
                        let t = bench_now() - t0
                        // Exactly the 100 others are left: the disposed ones are gone.
                        bench_count_reset()
                        lib.dispatch(1)
                        expectCount(column, "subscribe + dispose", bench_count(), 100)
                        return t
                    }, 16
                ))
        }
        runInterleaved(r, subjects)
        for (_, lib) in libraries { lib.disconnectAll() }
    }

    // MARK: 3. two threads

    /// One dispatching thread: pinned to its CPU, it waits at the barrier, then
    /// dispatches and counts on its own counter.
    ///
    /// @unchecked Sendable: the driver writes the `let`s before pthread_create and reads
    /// the results after pthread_join, which order the accesses; the thread writes the
    /// `var`s in between.
    private final class Worker: @unchecked Sendable {
        let library: any BenchLibrary
        let iterations: UInt64
        let cpu: Int32
        let barrier: UnsafeMutablePointer<pthread_barrier_t>
        var t0 = 0.0, t1 = 0.0, count: UInt64 = 0, pinned: Int32 = 0

        init(
            library: any BenchLibrary, iterations: UInt64, cpu: Int32, barrier: UnsafeMutablePointer<pthread_barrier_t>
        ) {
            self.library = library
            self.iterations = iterations
            self.cpu = cpu
            self.barrier = barrier
        }

        func run() {
            pinned = bench_pin_cpu(cpu)
            bench_count_reset()
            pthread_barrier_wait(barrier)
            t0 = bench_now()
            library.dispatch(iterations)
            t1 = bench_now()
            count = bench_count()
        }
    }

    /// Wall time from the first thread's start to the last one's end; each thread
    /// dispatches n times on its own CPU.
    private func runThreads(_ column: Column, _ lib: any BenchLibrary, _ n: UInt64, threads: Int) -> Double {
        let barrier = UnsafeMutablePointer<pthread_barrier_t>.allocate(capacity: 1)
        defer { barrier.deallocate() }
        pthread_barrier_init(barrier, nil, UInt32(threads))
        defer { pthread_barrier_destroy(barrier) }
        let cpus = [machine.cpus.0, machine.cpus.1]
        var workers: [Worker] = []
        var tids: [pthread_t] = []
        for i in 0..<threads {
            let w = Worker(library: lib, iterations: n, cpu: cpus[i], barrier: barrier)
            workers.append(w)
            var tid = pthread_t()
            let rc = pthread_create(
                &tid, nil,
                { arg in
                    Unmanaged<Worker>.fromOpaque(arg!).takeRetainedValue().run()
                    return nil
                }, Unmanaged.passRetained(w).toOpaque())
            if rc != 0 { fail("pthread_create failed: \(rc)") }
            tids.append(tid)
        }
        for tid in tids { pthread_join(tid, nil) }
        var first = Double.infinity, last = -Double.infinity
        for w in workers {
            if w.pinned != 0 { fail("cannot pin a thread to CPU \(w.cpu)") }
            expectCount(column, threads == 1 ? "one thread" : "two threads", w.count, n * 10)
            first = Swift.min(first, w.t0)
            last = Swift.max(last, w.t1)
        }
        return last - first
    }

    func caseTwoThreads() {
        let r = newRow("two_threads_10", "2 threads, 10 closures: scaling", "x 1 thread", better: "higher")
        r.handlers = 10
        r.peerRow = true
        guard machine.cpusAllowed >= 2 else {
            for (column, _) in Column.libraries { r[column].na = "n/a (fewer than 2 CPUs)" }
            return
        }
        var libraries: [(Column, any BenchLibrary)] = []
        for (column, make) in Column.libraries {
            let lib = make()
            lib.connect(10)
            libraries.append((column, lib))
            r[column].iterations = calibrate({ n in self.runThreads(column, lib, n, threads: 1) }, start: 64)
        }
        // Per repetition and library: one thread, then two, back to back; the figure is
        // (2 n / two-thread wall time) / (n / one-thread wall time).
        for _ in 0..<opt.reps {
            for (column, lib) in libraries {
                let n = r[column].iterations
                let t1 = runThreads(column, lib, n, threads: 1)
                let t2 = runThreads(column, lib, n, threads: 2)
                r[column].reps.append(2 * t1 / t2)
            }
        }
        for (_, lib) in libraries { lib.disconnectAll() }
    }

    // MARK: 4. memory per subscription

    func caseMemory() {
        let r = newRow("memory_per_subscription", "memory per subscription (RSS)", "bytes")
        r.peerRow = true
        let h = newRow("heap_per_subscription", "memory per subscription (heap)", "bytes")
        h.inTable = false
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        for _ in 0..<opt.reps {
            for (column, _) in Column.libraries {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: me)
                p.arguments = ["--child-mem", column.key, String(opt.memorySubscriptions)]
                let out = Pipe()
                p.standardOutput = out
                do { try p.run() } catch { fail("cannot run \(me): \(error)") }
                let data = out.fileHandleForReading.readDataToEndOfFile()
                p.waitUntilExit()
                if p.terminationReason != .exit || p.terminationStatus != 0 {
                    fail("\(column.head): the memory child did not exit with 0 (status \(p.terminationStatus))")
                }
                let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap {
                    Double($0)
                }
                if fields.count != 2 { fail("\(column.head): the memory child printed no figures") }
                r[column].reps.append(fields[0])
                h[column].reps.append(fields[1])
                r[column].iterations = UInt64(opt.memorySubscriptions)
                h[column].iterations = UInt64(opt.memorySubscriptions)
            }
        }
    }

    // MARK: 5. queued delivery

    /// Two variants: burst (the queue is held by a gate item until all n are posted: the
    /// enqueue, dequeue and call cost per item, with no wake-up per item; the row the
    /// target is checked on) and streaming (the queue runs while the items are posted:
    /// what a producer sees, which swings with whether the consumer thread sleeps
    /// between items).
    func caseQueue(burst: Bool) {
        let r =
            burst
            ? newRow("queued_serial", "queued, serial queue (burst)", "ns/event")
            : newRow("queued_serial_streaming", "queued, serial queue (stream)", "ns/event")
        for (column, _) in Column.libraries where column != .qtbus { r[column].na = "-" }
        let qtbus = QtbusQueued(), bare = BareQueued()
        func measure(_ column: Column, _ lib: any QueuedLibrary) -> Measure {
            { n in
                let t0 = bench_now()
                let posted = lib.run(n, burst: burst)
                let t = bench_now() - t0
                if posted != n { fail("\(column.head): queued dispatch posted \(posted) of \(n)") }
                expectCount(column, "queued delivery", lib.counter.count, n)
                return t
            }
        }
        runInterleaved(r, [(.qtbus, measure(.qtbus, qtbus), 256), (.bare, measure(.bare, bare), 256)])
    }
}

/// The memory child: swift-bench --child-mem KEY N.  Prints "RSS HEAP", bytes per
/// subscription; returns the exit status.
func childMemory(key: String, n: Int) -> Int32 {
    guard let (column, make) = Column.libraries.first(where: { $0.column.key == key }) else {
        FileHandle.standardError.write(Data("swift-bench: unknown library \(key)\n".utf8))
        return 2
    }
    let lib = make()
    lib.reserve(n)  // the handles' array is the caller's, not counted
    lib.subscribeDispose(16)  // first-use allocations are not counted either
    let rss0 = bench_rss_bytes(), heap0 = bench_heap_bytes()
    lib.connect(n)
    let rss1 = bench_rss_bytes(), heap1 = bench_heap_bytes()
    if rss0 < 0 || rss1 < 0 { fail("cannot read /proc/self/statm") }
    bench_count_reset()
    lib.dispatch(1)
    expectCount(column, "memory", bench_count(), UInt64(n))
    print(String(format: "%.3f %.3f", (rss1 - rss0) / Double(n), (heap1 - heap0) / Double(n)))
    return 0
}
