// SPDX-License-Identifier: MIT
// Helpers of the request, command and source tests: bounded awaits (a bug must fail a
// test, not hang it), stream reading with a deadline, and the C observers of a command.
import Dispatch
import Foundation
import QTEventBus
import QTEventBusCTestSupport
import QTEventBusTestSupport

struct TimedOut: Error {}

/// Awaits `operation`, or throws `TimedOut` after `seconds` (the operation is then left
/// running: an awaited continuation cannot be cancelled).
func bounded<T: Sendable>(_ seconds: Double = 5, _ operation: @escaping @Sendable () async throws -> T)
    async throws -> T
{
    let claimed = OneShotFlag()
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
        Task {
            do {
                let value = try await operation()
                if claimed.claim() { continuation.resume(returning: value) }
            } catch {
                if claimed.claim() { continuation.resume(throwing: error) }
            }
        }
        Task {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            if claimed.claim() { continuation.resume(throwing: TimedOut()) }
        }
    }
}

/// The first `count` elements of `stream`, or fewer if `seconds` pass (never hangs).
func firstElements<T: Sendable>(_ stream: AsyncStream<T>, _ count: Int, within seconds: Double = 5) async -> [T] {
    let reader = Task {
        var got: [T] = []
        for await value in stream {
            got.append(value)
            if got.count == count { break }
        }
        return got
    }
    let timer = Task {
        try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
        reader.cancel()
    }
    let got = await reader.value
    timer.cancel()
    return got
}

/// C observers of one command's four event types (slots of the C peer, cpeer.c).
struct CCommandObserver {
    let executing, values, errors, enabled: CReceived

    init(_ name: String) {
        executing = CReceived(slot: cpeer_listen("QTCommandExecuting", name))
        values = CReceived(slot: cpeer_listen("QTCommandValue", name))
        errors = CReceived(slot: cpeer_listen("QTCommandError", name))
        enabled = CReceived(slot: cpeer_listen("QTCommandEnabled", name))
    }

    func stop() { for c in [executing, values, errors, enabled] { c.stop() } }
}
