// SPDX-License-Identifier: MIT
// Rows and cells of the results table, and their statistics.

/// The table's columns: the libraries, and the bare baseline of the queued rows.
enum Column: Int, CaseIterable {
    case qtbus, notificationCenter, openCombine, limit, bare

    /// The key in bench-swift.json (and Benchmarks/plot.py's style table).
    var key: String {
        switch self {
        case .qtbus: "qtbus"
        case .notificationCenter: "nc"
        case .openCombine: "opencombine"
        case .limit: "limit"
        case .bare: "bare"
        }
    }

    /// The table's heading.
    var head: String {
        switch self {
        case .qtbus: "qtbus"
        case .notificationCenter: "NotifCenter"
        case .openCombine: "OpenCombine"
        case .limit: "closure[]"
        case .bare: "bare"
        }
    }

    /// The name in prose (Markdown, the run's header line).
    var displayName: String {
        switch self {
        case .notificationCenter: "NotificationCenter"
        default: head
        }
    }

    var ratioHead: String {
        switch self {
        case .qtbus: ""
        case .notificationCenter: "q/NC"
        case .openCombine: "q/OpenComb"
        case .limit: "q/limit"
        case .bare: "q/bare"
        }
    }

    var longName: String {
        switch self {
        case .qtbus: "qtbus (Swift API: QTEventBus)"
        case .notificationCenter:
            "Foundation NotificationCenter (the Swift toolchain's Foundation for Linux), block observers"
        case .openCombine: "OpenCombine PassthroughSubject, sink subscribers"
        case .limit:
            "limit: closures in a Swift array, called in a loop as Swift compiles it (a retain and release of each context per call); no lock, not thread-safe to change: a floor, not a peer"
        case .bare: "DispatchQueue.async to a serial queue (queued rows)"
        }
    }

    /// The columns a library adapter measures, with the adapter's maker.
    static let libraries: [(column: Column, make: @Sendable () -> any BenchLibrary)] = [
        (.qtbus, { QtbusLibrary() }),
        (.notificationCenter, { NotificationCenterLibrary() }),
        (.openCombine, { OpenCombineLibrary() }),
        (.limit, { ClosureArrayLibrary() }),
    ]
}

/// One column's figures in one row: a value per repetition.
struct Cell {
    /// Why absent: "n/a (...)" for a case that does not apply, "-" for a column the row
    /// does not have.  nil with no repetitions: not measured.
    var na: String?
    var reps: [Double] = []
    /// Operations per repetition.
    var iterations: UInt64 = 0

    var present: Bool { !reps.isEmpty }
    var median: Double { medianOf(reps) }
    var min: Double { reps.min() ?? 0 }
    var max: Double { reps.max() ?? 0 }
}

func medianOf(_ values: [Double]) -> Double {
    guard !values.isEmpty else { return 0 }
    let s = values.sorted()
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

final class Row {
    let id: String
    let title: String
    let unit: String
    /// "lower" or "higher".
    let better: String
    /// Dispatch rows and the scaling row: the closure count.
    var handlers: Int?
    /// false: JSON only.
    var inTable = true
    /// A row of PERFORMANCE.md's peer tables (qtbus must beat every peer there).
    var peerRow = false
    var cells: [Column: Cell] = [:]

    init(id: String, title: String, unit: String, better: String = "lower") {
        self.id = id
        self.title = title
        self.unit = unit
        self.better = better
    }

    subscript(column: Column) -> Cell {
        get { cells[column] ?? Cell() }
        set { cells[column] = newValue }
    }

    /// qtbus / the column: the median of the per-repetition ratios.  Within a repetition
    /// the libraries ran back to back, so each pair saw the same machine state, which the
    /// pairing cancels.  nil when there is nothing to compare.
    func ratio(_ column: Column) -> Double? {
        let q = self[.qtbus], p = self[column]
        guard column != .qtbus, q.present, p.present, q.reps.count == p.reps.count else { return nil }
        var v: [Double] = []
        for (a, b) in zip(q.reps, p.reps) {
            guard b > 0 else { return nil }
            v.append(a / b)
        }
        return medianOf(v)
    }

    /// Whether qtbus beats the column on this row (nil: nothing to compare).
    func beats(_ column: Column) -> Bool? {
        guard let x = ratio(column) else { return nil }
        return better == "higher" ? x > 1 : x < 1
    }
}
