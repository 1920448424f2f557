// SPDX-License-Identifier: MIT
// Thread-safe recording and bounded waits, shared by the engine's, QTEventBus's and
// QTEventBusFoundation's tests (handlers run on other threads; a bug must fail a test,
// not hang it).
import Glibc
import Synchronization

/// A pthread mutex: ThreadSanitizer sees it (it does not see Synchronization.Mutex's
/// futex on Linux, and would report the state it guards as racing).
public final class TestLock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    public init() { pthread_mutex_init(mutex, nil) }
    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
    public func withLock<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}

/// A counter handlers can bump from any thread.
public final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    public init() {}
    public func increment() { storage.add(1, ordering: .sequentiallyConsistent) }
    public var value: Int { storage.load(ordering: .sequentiallyConsistent) }
}

/// Records values in arrival order, from any thread.
public final class Recorder<T: Sendable>: @unchecked Sendable {
    // @unchecked: `storage` is only touched under `lock`.
    private let lock = TestLock()
    private var storage: [T] = []
    public init() {}
    public func append(_ value: T) { lock.withLock { storage.append(value) } }
    public var values: [T] { lock.withLock { storage } }
    public var count: Int { lock.withLock { storage.count } }
    public func clear() { lock.withLock { storage.removeAll() } }
}

/// One value shared between threads (a handler's or a thread's and the test's): every
/// read and every write is under a lock.  A read-modify-write (`v.value += 1`) is a
/// read then a write, not one step.
public final class LockedValue<T>: @unchecked Sendable {
    // @unchecked: `stored` is only touched under `lock`.
    private let lock = TestLock()
    private var stored: T
    public init(_ value: T) { stored = value }
    public var value: T {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

extension LockedValue where T: ExpressibleByNilLiteral {
    /// Empty (nil) to begin with.
    public convenience init() { self.init(nil) }

    /// The value, leaving nil in its place (a test drops what a handler kept).
    public func take() -> T {
        lock.withLock {
            defer { stored = nil }
            return stored
        }
    }
}

/// A flag that is set once and stays set: threads wait on it (with a time limit, so a
/// bug fails a test instead of hanging it), and `claim()` picks one winner among racing
/// callers.
public final class OneShotFlag: Sendable {
    private let state = Atomic<Bool>(false)
    public init() {}
    public func set() { state.store(true, ordering: .sequentiallyConsistent) }
    public var isSet: Bool { state.load(ordering: .sequentiallyConsistent) }
    /// Sets the flag; true for the caller that set it first only, whichever thread.
    public func claim() -> Bool { !state.exchange(true, ordering: .sequentiallyConsistent) }
    @discardableResult
    public func wait(_ seconds: Double = 5) -> Bool { waitUntil(seconds) { isSet } }
}

public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Polls `condition` until it holds or `seconds` pass; false on timeout (never hangs).
@discardableResult
public func waitUntil(_ seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + seconds
    while !condition() {
        if monotonicSeconds() > deadline { return false }
        usleep(50)
    }
    return true
}
