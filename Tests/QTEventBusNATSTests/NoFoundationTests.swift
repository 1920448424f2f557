// SPDX-License-Identifier: MIT
// QTEventBusNATS, like QTEventBus, does not bring Foundation into a process (its
// overview says so): nats.c and Dispatch are all it needs. Its tests use Foundation.
import Foundation
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("NATS bridge: no Foundation")
    struct NATSNoFoundationTests {
        @Test func qTEventBusNATSSourcesDoNotImportFoundation() throws {
            let sources = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Sources/QTEventBusNATS")
            let files = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter {
                $0.hasSuffix(".swift")
            }
            #expect(!files.isEmpty)
            for file in files {
                let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
                for line in text.split(separator: "\n")
                where line.hasPrefix("import ") || line.hasPrefix("@_exported import ") {
                    #expect(!line.contains("Foundation"), "\(file): \(line)")
                }
            }
        }
    }
}
