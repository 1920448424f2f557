// Helpers for the Foundation tests (handlers run on other threads).
import Foundation
import Synchronization

final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    init() {}
    func increment() { storage.add(1, ordering: .sequentiallyConsistent) }
    var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

final class Recorder<T: Sendable>: @unchecked Sendable {
    // @unchecked: `storage` is only touched under `lock` (an NSLock, a pthread mutex
    // ThreadSanitizer understands; Synchronization.Mutex's Linux futex it does not).
    private let lock = NSLock()
    private var storage: [T] = []
    init() {}
    func append(_ value: T) { lock.withLock { storage.append(value) } }
    var values: [T] { lock.withLock { storage } }
    var count: Int { lock.withLock { storage.count } }
}

@discardableResult
func waitUntil(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(100)
    }
    return true
}
