// SPDX-License-Identifier: MIT
// What the run was measured on.
import BenchSupport
import Foundation

struct Machine {
    var cpuModel = "unknown"
    var cpusOnline = ProcessInfo.processInfo.processorCount
    var cpusAllowed = 1
    /// The first two CPUs this process may run on (-1: none).
    var cpus: (Int32, Int32) = (-1, -1)
    var kernel = "unknown"
    var dateUTC = ""
    var loadStart = -1.0

    static func read() -> Machine {
        var m = Machine()
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
            let colon = line.firstIndex(of: ":")
        {
            m.cpuModel = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var first: Int32 = -1, second: Int32 = -1
        m.cpusAllowed = Int(bench_allowed_cpus(&first, &second))
        m.cpus = (first, second)
        func proc(_ path: String) -> String? {
            (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #if arch(x86_64)
            let arch = "x86_64"
        #elseif arch(arm64)
            let arch = "aarch64"
        #else
            let arch = "unknown"
        #endif
        m.kernel = "\(proc("/proc/sys/kernel/ostype") ?? "Linux") \(proc("/proc/sys/kernel/osrelease") ?? "?") \(arch)"
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss'Z'"
        m.dateUTC = f.string(from: Date())
        if let load = proc("/proc/loadavg")?.split(separator: " ").first, let v = Double(load) {
            m.loadStart = v
        }
        return m
    }
}
