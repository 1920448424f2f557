// SPDX-License-Identifier: MIT
// The outputs: the terminal tables, bench-swift.json and bench-swift.md, and the
// PERFORMANCE.md targets checked on them.
import Foundation

/// A target of PERFORMANCE.md, checked on one row's qtbus figure (or its ratio to bare).
struct Target {
    let figure: String
    let rowID: String
    /// For people.
    let target: String
    let limit: Double
    /// true: value >= limit; false: value <= limit.
    let atLeast: Bool
    /// The value is qtbus / bare.
    let vsBare: Bool
    /// One of PERFORMANCE.md's Swift targets; else a general target the Swift API is
    /// also measured against.
    let swift: Bool
}

let allTargets: [Target] = [
    Target(
        figure: "Swift typed dispatch, 1 closure", rowID: "dispatch_1", target: "<= 25 ns",
        limit: 25, atLeast: false, vsBare: false, swift: true),
    Target(
        figure: "Swift typed dispatch, 10 closures", rowID: "dispatch_10", target: "<= 60 ns",
        limit: 60, atLeast: false, vsBare: false, swift: true),
    Target(
        figure: "Swift typed dispatch, 100 closures", rowID: "dispatch_100", target: "<= 400 ns",
        limit: 400, atLeast: false, vsBare: false, swift: true),
    Target(
        figure: "queued delivery through one serial queue, burst", rowID: "queued_serial",
        target: "<= 1.5x bare DispatchQueue.async", limit: 1.5, atLeast: false, vsBare: true, swift: true),
    Target(
        figure: "2 threads dispatching the same type to 10 closures", rowID: "two_threads_10",
        target: ">= 1.6x one thread", limit: 1.6, atLeast: true, vsBare: false, swift: false),
    Target(
        figure: "memory per subscription (token, closure included)", rowID: "memory_per_subscription",
        target: "<= 96 bytes", limit: 96, atLeast: false, vsBare: false, swift: false),
    // Round two (PERFORMANCE.md): the stream row, and the Swift memory figure.
    Target(
        figure: "queued delivery through one serial queue, stream", rowID: "queued_serial_streaming",
        target: "<= 1.5x bare DispatchQueue.async", limit: 1.5, atLeast: false, vsBare: true, swift: true),
    Target(
        figure: "Swift memory per subscription", rowID: "memory_per_subscription",
        target: "<= 150 bytes (NotificationCenter: 177)", limit: 150, atLeast: false, vsBare: false, swift: true),
]

func fmtValue(_ v: Double) -> String {
    let a = abs(v)
    return String(format: a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", v)
}

func pad(_ s: String, _ width: Int, left: Bool = false) -> String {
    let n = s.count
    guard n < width else { return s }
    let fill = String(repeating: " ", count: width - n)
    return left ? s + fill : fill + s
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for u in s.unicodeScalars {
        switch u {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        default:
            if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
        }
    }
    return out + "\""
}

func jsonNumber(_ v: Double) -> String { String(format: "%.6g", v) }

struct Report {
    let driver: Driver
    var opt: Options { driver.opt }
    var rows: [Row] { driver.rows }
    var machine: Machine { driver.machine }

    private func naText(_ c: Cell) -> String { c.na?.hasPrefix("n/a") == true ? "n/a" : "-" }

    private func ratioText(_ r: Row, _ column: Column) -> String {
        guard let x = r.ratio(column) else { return "-" }
        return String(format: "%.3gx", x)
    }

    // MARK: Terminal

    func table(spread: Bool) -> String {
        let ratioColumns = Column.allCases.dropFirst()
        var s = pad(spread ? "spread: min..max" : "median of repetitions", 32, left: true) + pad("unit", 11, left: true)
        for c in Column.allCases { s += pad(c.head, spread ? 16 : 12) }
        if !spread { for c in ratioColumns { s += pad(c.ratioHead, 11) } }
        s += "\n"
        for r in rows where r.inTable {
            s += pad(r.title, 32, left: true) + pad(r.unit, 11, left: true)
            for c in Column.allCases {
                let cell = r[c]
                let v =
                    !cell.present
                    ? naText(cell)
                    : spread ? "\(fmtValue(cell.min))..\(fmtValue(cell.max))" : fmtValue(cell.median)
                s += pad(v, spread ? 16 : 12)
            }
            if !spread { for c in ratioColumns { s += pad(ratioText(r, c), 11) } }
            s += "\n"
        }
        return s
    }

    // MARK: Targets

    struct TargetResult {
        var value: Double?
        var met: Bool?
    }

    func check(_ t: Target) -> TargetResult {
        guard let r = driver.row(t.rowID), r[.qtbus].present, !t.vsBare || r[.bare].present else {
            return TargetResult()
        }
        let v = t.vsBare ? r.ratio(.bare) ?? 0 : r[.qtbus].median
        return TargetResult(value: v, met: t.atLeast ? v >= t.limit : v <= t.limit)
    }

    private func valueText(_ t: Target, _ res: TargetResult) -> String {
        guard let v = res.value, let r = driver.row(t.rowID) else { return "n/a" }
        return t.vsBare ? "\(fmtValue(v))x bare" : "\(fmtValue(v)) \(r.unit)"
    }

    private func metText(_ res: TargetResult) -> String {
        guard let met = res.met else { return "not measured" }
        return met ? "met" : "NOT met"
    }

    /// The rows where qtbus does not beat NotificationCenter or OpenCombine.
    private func lostRows() -> [String] {
        var lost: [String] = []
        for r in rows where r.peerRow {
            for peer in [Column.notificationCenter, .openCombine] where r.beats(peer) == false {
                lost.append(
                    "\(r.title): \(fmtValue(r[.qtbus].median)) vs \(peer.displayName) \(fmtValue(r[peer].median)) \(r.unit)"
                        + " (\(String(format: "%.3g", r.ratio(peer) ?? 0))x)")
            }
        }
        return lost
    }

    func targets(markdown: Bool) -> String {
        var s = markdown ? "| figure | target | qtbus | met |\n|---|---|---|---|\n" : ""
        for swift in [true, false] {
            if !markdown {
                s += swift ? "  Swift targets:\n" : "  general targets, measured through the Swift API:\n"
            } else if !swift {
                s += "| *general targets, measured through the Swift API* | | | |\n"
            }
            for t in allTargets where t.swift == swift {
                let res = check(t)
                if markdown {
                    s += "| \(t.figure) | \(t.target) | \(valueText(t, res)) | \(metText(res)) |\n"
                } else {
                    s +=
                        "  " + pad(t.figure, 58, left: true) + pad(t.target, 34, left: true)
                        + pad(valueText(t, res), 16, left: true) + metText(res) + "\n"
                }
            }
        }
        let lost = lostRows()
        if markdown {
            s +=
                "| beat NotificationCenter and OpenCombine on every peer row | every row | "
                + (lost.isEmpty ? "beats both everywhere" : lost.joined(separator: "; ")) + " | "
                + (lost.isEmpty ? "met" : "NOT met") + " |\n"
        } else {
            s +=
                "  " + pad("beat NotificationCenter and OpenCombine on every peer row", 58, left: true)
                + pad("every row", 34, left: true) + pad(lost.isEmpty ? "all rows" : "lost on", 16, left: true)
                + (lost.isEmpty ? "met" : "NOT met") + "\n"
            if !lost.isEmpty { s += "      lost on: " + lost.joined(separator: "; ") + "\n" }
        }
        return s
    }

    // MARK: JSON

    func json() -> String {
        var s = "{\n  \"schema\": \"qtbus-bench-swift/1\",\n  \"date\": \(jsonString(machine.dateUTC)),\n"
        s +=
            "  \"machine\": {\"cpu\": \(jsonString(machine.cpuModel)), \"cpus_online\": \(machine.cpusOnline), "
            + "\"cpus_allowed\": \(machine.cpusAllowed), \"kernel\": \(jsonString(machine.kernel)), "
            + "\"loadavg_start\": \(String(format: "%.2f", machine.loadStart)), "
            + "\"other_cpu_use_cores\": \(String(format: "%.3f", driver.otherCPUShare))},\n"
        s +=
            "  \"meta\": {" + opt.meta.map { "\(jsonString($0.key)): \(jsonString($0.value))" }.joined(separator: ", ")
            + "},\n"
        s +=
            "  \"method\": {\"repetitions\": \(opt.reps), \"min_repetition_seconds\": \(String(format: "%.3f", opt.repSeconds)), "
            + "\"interleaved\": true, \"statistic\": \"median\", \"memory_subscriptions\": \(opt.memorySubscriptions), "
            + "\"build\": \"swift build -c release\", \"smoke\": \(opt.smoke)},\n"
        s += "  \"libraries\": [\n"
        s += Column.allCases.map {
            "    {\"key\": \"\($0.key)\", \"name\": \(jsonString($0.longName)), \"version\": \(jsonString($0 == .bare || $0 == .limit ? "-" : driver.version($0)))}"
        }.joined(separator: ",\n")
        s += "\n  ],\n  \"cases\": [\n"
        s += rows.map { r in
            var c =
                "    {\"id\": \"\(r.id)\", \"title\": \(jsonString(r.title)), \"unit\": \(jsonString(r.unit)), \"better\": \"\(r.better)\""
            if let h = r.handlers { c += ", \"handlers\": \(h)" }
            c += ",\n     \"results\": {"
            var results: [String] = []
            for col in Column.allCases {
                let cell = r[col]
                if !cell.present {
                    if let na = cell.na { results.append("\n       \"\(col.key)\": {\"na\": \(jsonString(na))}") }
                    continue
                }
                results.append(
                    "\n       \"\(col.key)\": {\"median\": \(jsonNumber(cell.median)), \"min\": \(jsonNumber(cell.min)), "
                        + "\"max\": \(jsonNumber(cell.max)), \"operations_per_repetition\": \(cell.iterations), "
                        + "\"repetitions\": [" + cell.reps.map(jsonNumber).joined(separator: ", ") + "]}")
            }
            c += results.joined(separator: ",") + "},\n     \"ratio_qtbus_over\": {"
            c += Column.allCases.compactMap { col in
                r.ratio(col).map { "\"\(col.key)\": \(String(format: "%.4g", $0))" }
            }.joined(separator: ", ")
            return c + "}}"
        }.joined(separator: ",\n")
        s += "\n  ],\n  \"targets\": [\n"
        s += allTargets.map { t in
            let res = check(t)
            var e =
                "    {\"figure\": \(jsonString(t.figure)), \"case\": \"\(t.rowID)\", \"target\": \(jsonString(t.target)), "
                + "\"swift_target\": \(t.swift), "
            if let v = res.value, let met = res.met {
                e += "\"value\": \(String(format: "%.4g", v)), \"met\": \(met)}"
            } else {
                e += "\"value\": null, \"met\": null}"
            }
            return e
        }.joined(separator: ",\n")
        let lost = lostRows()
        s +=
            "\n  ],\n  \"beats_every_peer\": {\"met\": \(lost.isEmpty), \"lost_on\": ["
            + lost.map(jsonString).joined(separator: ", ") + "]}\n}\n"
        return s
    }

    // MARK: Markdown

    func markdown() -> String {
        let meta = Dictionary(opt.meta.map { ($0.key, $0.value) }, uniquingKeysWith: { _, b in b })
        var s = """
            # qtbus Swift benchmark

            Why qtbus's Swift API and not NotificationCenter or Combine: the same cases as the \
            [C benchmark](bench-c.md), measured side by side in one run, with OpenCombine's \
            `PassthroughSubject` standing in for Combine on Linux. Reproduce with `scripts/bench.sh` \
            (after the C benchmark it builds `Benchmarks/Swift/`, a package of its own that depends on \
            qtbus by path, with `swift build -c release`, and rewrites this file, bench-swift.json \
            and bench-swift.png); `scripts/bench.sh --smoke` checks every case in seconds. Method and \
            code: `Benchmarks/Swift/Sources/swift-bench/`.


            """
        s +=
            "Generated by `scripts/bench.sh` on \(machine.dateUTC). Machine: \(machine.cpuModel), "
            + "\(machine.cpusAllowed) CPUs allowed, \(machine.kernel); other programs used "
            + String(format: "%.0f%%", driver.otherCPUShare * 100) + " of one CPU during the run.  \n"
        s +=
            "Swift: \(meta["swift"] ?? "unknown"), `swift build -c release` (Swift 6 language mode); "
            + "qtbus revision: \(meta["qtbus revision"] ?? "unknown").  \n"
        s +=
            "Libraries: "
            + [Column.qtbus, .notificationCenter, .openCombine].map { "\($0.displayName) \(driver.version($0))" }
            .joined(separator: ", ") + ".\n\n"
        s +=
            "Median of \(opt.reps) repetitions (each >= \(String(format: "%.0f", opt.repSeconds * 1e3)) ms, libraries "
            + "interleaved round-robin), with min-max in parentheses; `q/X` is qtbus over X: the median of the "
            + "per-repetition ratios (each pair ran back to back, so the machine's drift cancels). Lower is better "
            + "except on the scaling row (aggregate rate of two threads over one thread's). Absolute figures move "
            + "between runs and machines; compare the ratios within one run.\n\n"
        s +=
            "| case | unit | " + Column.allCases.map(\.displayName).joined(separator: " | ") + " | "
            + Column.allCases.dropFirst().map { "q/\($0.displayName)" }.joined(separator: " | ") + " |\n"
        s += "|---|---|" + String(repeating: "---:|", count: Column.allCases.count * 2 - 1) + "\n"
        for r in rows where r.inTable {
            s += "| \(r.title) | \(r.unit) |"
            for c in Column.allCases {
                let cell = r[c]
                if !cell.present {
                    s += " \(naText(cell)) |"
                    continue
                }
                let m = c == .qtbus ? "**\(fmtValue(cell.median))**" : fmtValue(cell.median)
                s += " \(m) (\(fmtValue(cell.min))-\(fmtValue(cell.max))) |"
            }
            for c in Column.allCases.dropFirst() { s += " \(ratioText(r, c)) |" }
            s += "\n"
        }
        s +=
            "\nColumns: "
            + Column.allCases.map { "**\($0.displayName)**: \($0.longName)" }
            .joined(separator: "; ") + ".\n\n"
        s += """
            Cases: the event is a struct with one `Int` field, and every closure increments a per-thread \
            counter (the same inline C `__thread` increment for every library; after every repetition the \
            counts are checked). dispatch = one event to N closures (qtbus: `bus.dispatch(Event(...))` on \
            an isolated `QTEventBus()` with `bus.on(Event.self).next { }` subscriptions; NotificationCenter: \
            `post(name:object:userInfo:)` with the event in `userInfo`, to block observers on a private \
            `NotificationCenter()`; OpenCombine: `PassthroughSubject<Event, Never>.send` to `sink` \
            subscribers); subscribe+dispose = subscribe and dispose of one closure while 100 others stay \
            (`next` + `token.dispose()`; `addObserver(forName:...)` + `removeObserver`; `sink` + `cancel`); \
            scaling = two threads on two CPUs dispatching the same event type to 10 closures, their \
            aggregate rate over one thread's (n/a with fewer than 2 CPUs; the closure[] column shows \
            what the machine allowed in the same run: on a VM whose two vCPUs the host may place on one \
            physical core, it moves between about 1.1x and 2x, and lock-bound peers move the other way); memory = RSS growth per \
            subscription over \(opt.memorySubscriptions) subscriptions, each library in a fresh process, \
            the token / observer / cancellable and the closure included, the array holding them not \
            (the heap figure from mallinfo2 is in bench-swift.json); queued = N dispatches to one \
            `.atQueue(serialQueue)` subscription until it has counted N, against bare \
            `serialQueue.async { count += 1 }`, as a burst (a gate item holds the queue until all N are \
            posted: the cost per item without a thread wake-up per item; PERFORMANCE.md's target is \
            checked on this row) and as a stream (the queue runs meanwhile; swings with whether its \
            thread sleeps between items).


            """
        s += "![ns per dispatch against closure count](bench-swift.png)\n\n"
        s += "## Targets of PERFORMANCE.md in this run\n\n"
        s += targets(markdown: true)
        s += "\nMachine-readable results: [bench-swift.json](bench-swift.json).\n"
        return s
    }

    func write(_ text: String, to path: String) {
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            fail("cannot write \(path): \(error)")
        }
    }
}
