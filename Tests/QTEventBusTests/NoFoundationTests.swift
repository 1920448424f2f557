// SPDX-License-Identifier: MIT
// QTEventBus (like libqtbus.so) must not bring Foundation into a process, whose
// libraries and start-up time every program using the bus would then pay for (README:
// "QTEventBus (no Foundation: Dispatch and Synchronization only)").
import Foundation
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("No Foundation")
    struct NoFoundationTests {
        @Test func qTEventBusSourcesDoNotImportFoundation() throws {
            let sources = URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Sources/QTEventBus")
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
