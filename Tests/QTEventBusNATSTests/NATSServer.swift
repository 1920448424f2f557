// SPDX-License-Identifier: MIT
// A real nats-server for the bridge's Swift tests, as CTests/nats/nats_server.h is for
// the C ones: on 127.0.0.1, on a port the kernel picked as free, with its own
// temporary directory (its log, and JetStream's store when asked for), stopped by the
// test. nats-server is found on PATH or in /usr/sbin, /usr/local/sbin (Debian:
// nats-server; scripts/deps.sh installs it): without it the tests fail, they do not skip.
import Foundation
import Glibc

struct NATSServerError: Error, CustomStringConvertible {
    let description: String
}

final class NATSServer: @unchecked Sendable {
    // @unchecked: set once in init; stop() is called by the one test that owns it.
    let port: Int
    let directory: URL
    private let process = Process()

    var url: String { "nats://127.0.0.1:\(port)" }

    init(jetstream: Bool = false) throws {
        port = try Self.freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "qtbus-nats-swift-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process.executableURL = try Self.program()
        var arguments = [
            "-a", "127.0.0.1", "-p", String(port), "-l", directory.appendingPathComponent("server.log").path,
        ]
        if jetstream { arguments += ["-js", "-sd", directory.path] }
        process.arguments = arguments
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !Self.accepts(port) {
            if !process.isRunning { throw NATSServerError(description: "nats-server exited at start (\(arguments))") }
            if Date() > deadline { throw NATSServerError(description: "nats-server did not listen within 10 s") }
            usleep(10_000)
        }
    }

    /// Stops the server (SIGKILL: no goodbye to the clients) and removes its directory.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    deinit { stop() }

    static func program() throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for dir in path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/sbin"] {
            let candidate = dir + "/nats-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return URL(fileURLWithPath: candidate) }
        }
        throw NATSServerError(
            description: "nats-server not found on PATH or in /usr/sbin (Debian: apt-get install nats-server)")
    }

    /// A port nobody listens on now: the kernel's pick for an ephemeral bind.
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, ok else { throw NATSServerError(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
