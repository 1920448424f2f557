// SPDX-License-Identifier: MIT
// swift-bench: qtbus's Swift API against NotificationCenter and OpenCombine's
// PassthroughSubject, side by side in one run (the Swift half of the benchmark; the C
// half is Benchmarks/C/, the method is the same), with a floor as bench-c's fn-ptr column is
// one: closures in a Swift array called in a loop ("closure[]", the limit column).
//
//   swift-bench [--smoke] [--json FILE] [--md FILE] [--reps N] [--rep-ms MS]
//               [--case dispatch|subscribe|threads|memory|queue]...
//               [--meta KEY=VALUE]... [--lib-version KEY=VERSION]... [--verbose]
//
// Method (PERFORMANCE.md's): every case calibrates an iteration count per library so
// that one repetition lasts >= 100 ms, then runs the repetitions with the libraries
// interleaved (round-robin per repetition) and reports the median, min and max of 7
// repetitions and the ratio qtbus/peer (the median of the per-repetition ratios).
// After every repetition the closure calls are counted and the run exits with 1 and a
// message if the count is not the expected one.
// --smoke: 2 tiny repetitions per case (seconds in all), same checks.
//
// The cases:
//   1. dispatch of a typed event (a struct with one Int field) to 0, 1, 10, 100 closures
//      (ns per dispatch)
//   2. subscribe + dispose one closure with 100 others present (ns per pair)
//   3. two threads dispatching the same event type to 10 closures: aggregate rate / one
//      thread's rate (only with >= 2 CPUs in the affinity mask)
//   4. memory per subscription over 100,000 subscriptions: RSS delta (and heap delta
//      from mallinfo2, JSON only) in a fresh process per library and repetition (this
//      program re-run with --child-mem)
//   5. queued delivery through one serial queue: a qtbus `.atQueue(queue)` subscription
//      vs bare `queue.async { count += 1 }`, as a burst (a gate item holds the queue
//      until all items are posted) and as a stream
import BenchSupport
import Foundation

/// Prints the message and exits with 1: a closure count that is not what it must be,
/// a failed call.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("swift-bench: \(message)\n".utf8))
    exit(1)
}

func expectCount(_ column: Column, _ what: String, _ got: UInt64, _ want: UInt64) {
    if got != want {
        fail("\(column.head), \(what): the closures ran \(got) times, expected \(want)")
    }
}

/// The run's settings.
struct Options {
    var smoke = false
    var reps = 7
    var repSeconds = 0.1
    var memorySubscriptions = 100_000
    var json: String?
    var md: String?
    var meta: [(key: String, value: String)] = []
    var libraryVersions: [String: String] = [:]
    var only: Set<String> = []
    /// Print every calibration run.
    var verbose = false

    func wanted(_ name: String) -> Bool { only.isEmpty || only.contains(name) }
}

let caseNames = ["dispatch", "subscribe", "threads", "memory", "queue"]

func usage() -> Never {
    FileHandle.standardError.write(
        Data(
            """
            usage: swift-bench [--smoke] [--json FILE] [--md FILE] [--reps N] [--rep-ms MS]
                               [--case dispatch|subscribe|threads|memory|queue]...
                               [--meta KEY=VALUE]... [--lib-version KEY=VERSION]... [--verbose]

            """.utf8))
    exit(2)
}

func parseOptions(_ args: [String]) -> Options {
    var opt = Options()
    var i = 0
    func value() -> String {
        i += 1
        guard i < args.count else { usage() }
        return args[i]
    }
    func keyValue(_ s: String) -> (String, String) {
        guard let eq = s.firstIndex(of: "=") else { usage() }
        return (String(s[..<eq]), String(s[s.index(after: eq)...]))
    }
    while i < args.count {
        switch args[i] {
        case "--smoke":
            opt.smoke = true
            opt.reps = 2
            opt.repSeconds = 0.002
            opt.memorySubscriptions = 2000
        case "--verbose": opt.verbose = true
        case "--json": opt.json = value()
        case "--md": opt.md = value()
        case "--reps": opt.reps = Int(value()) ?? 0
        case "--rep-ms": opt.repSeconds = (Double(value()) ?? 0) / 1e3
        case "--case":
            let name = value()
            guard caseNames.contains(name) else { usage() }
            opt.only.insert(name)
        case "--meta":
            let (k, v) = keyValue(value())
            opt.meta.append((k, v))
        case "--lib-version":
            let (k, v) = keyValue(value())
            opt.libraryVersions[k] = v
        default: usage()
        }
        i += 1
    }
    if opt.reps < 1 || opt.reps > 64 || !(opt.repSeconds > 0) { usage() }
    return opt
}

@main
enum SwiftBench {
    static func main() {
        let args = Array(CommandLine.arguments.dropFirst())
        if args.count == 3, args[0] == "--child-mem" {
            guard let n = Int(args[2]), n > 0 else { usage() }
            exit(childMemory(key: args[1], n: n))
        }
        let opt = parseOptions(args)
        bench_stdout_line_buffered()
        let machine = Machine.read()
        let driver = Driver(options: opt, machine: machine)

        print(
            "swift-bench\(opt.smoke ? " --smoke" : ""): \(machine.cpuModel), \(machine.cpusAllowed) CPUs allowed, "
                + "load \(String(format: "%.2f", machine.loadStart))")
        print(
            "libraries: "
                + [Column.qtbus, .notificationCenter, .openCombine]
                .map { "\($0.displayName) \(driver.version($0))" }.joined(separator: ", "))
        print(
            "\(opt.reps) repetitions of >= \(String(format: "%.0f", opt.repSeconds * 1e3)) ms per library and case, interleaved\n"
        )

        let t0 = bench_now(), machine0 = bench_machine_cpu_seconds(), own0 = bench_own_cpu_seconds()
        if opt.wanted("dispatch") {
            for n in [0, 1, 10, 100] {
                print("running: dispatch to \(n) closure\(n == 1 ? "" : "s")")
                driver.caseDispatch(handlers: n)
            }
            print("running: dispatch to 10 freeWith closures")
            driver.caseDispatchFreeWith()
        }
        if opt.wanted("subscribe") {
            print("running: subscribe + dispose")
            driver.caseSubscribeDispose()
        }
        if opt.wanted("threads") {
            print("running: two threads")
            driver.caseTwoThreads()
        }
        if opt.wanted("memory") {
            print("running: memory per subscription (\(opt.memorySubscriptions) subscriptions, fresh process each)")
            driver.caseMemory()
        }
        if opt.wanted("queue") {
            print("running: queued delivery")
            driver.caseQueue(burst: true)
            driver.caseQueue(burst: false)
        }
        let wall = bench_now() - t0
        driver.otherCPUShare = Swift.max(
            0, ((bench_machine_cpu_seconds() - machine0) - (bench_own_cpu_seconds() - own0)) / wall)
        driver.wallSeconds = wall

        let report = Report(driver: driver)
        print("")
        print(report.table(spread: false), terminator: "")
        print("")
        print(report.table(spread: true), terminator: "")
        print("\nColumns:")
        for c in Column.allCases {
            print("  \(c.head.padding(toLength: 12, withPad: " ", startingAt: 0)) \(c.longName)")
        }
        print("q/X = qtbus / X, median of the per-repetition ratios (lower is better, except the scaling row: higher).")
        print("\nTargets of PERFORMANCE.md in this run\(opt.smoke ? " (smoke: not meaningful)" : ""):")
        print(report.targets(markdown: false), terminator: "")
        print(
            String(
                format: "\nother programs used %.0f%% of one CPU during the run (%.0f s)", driver.otherCPUShare * 100,
                wall)
                + (driver.otherCPUShare > 0.1 ? ": the machine was not idle, figures may be noisy" : ""))
        if let path = opt.json {
            report.write(report.json(), to: path)
            print("\nwrote \(path)")
        }
        if let path = opt.md {
            report.write(report.markdown(), to: path)
            print("wrote \(path)")
        }
        print("swift-bench: all closure counts checked\(opt.smoke ? " (smoke run)" : "")")
    }
}
