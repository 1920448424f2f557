// SPDX-License-Identifier: MIT
// The libraries under test, one adapter each, owning one "signal": a QTEventBus with one
// event type, a private NotificationCenter with one notification name, or one
// OpenCombine PassthroughSubject.  The adapters run their loops themselves, so the
// driver's call through the protocol is paid once per batch, not once per dispatch.
//
// Every subscribed closure does the same work: bench_count_inc(), this thread's counter
// (BenchSupport), which the driver checks after every measurement.
import BenchSupport
import Foundation
import OpenCombine
import QTEventBus

/// The event: a struct with one Int field.  qtbus keys it by its Swift type.
struct BenchEvent: QTEvent {
    let value: Int
}

/// A library under test.  An adapter is made on one thread; afterwards `dispatch` may
/// run on two threads at once (the scaling case), which only reads the adapter's stored
/// properties; everything else runs on the driver's thread.
protocol BenchLibrary: AnyObject, Sendable {
    init()
    /// Room for n more handles, memory touched (the memory case does not count it).
    func reserve(_ n: Int)
    /// n more counting closures, their handles kept.
    func connect(_ n: Int)
    /// Dispatches `iterations` events, each to every closure.
    func dispatch(_ iterations: UInt64)
    /// Subscribes one counting closure and disposes of it, `iterations` times.
    func subscribeDispose(_ iterations: UInt64)
    /// Ends every kept subscription.
    func disconnectAll()
}

/// A reference to fill a handle array with, to touch its pages before measuring.
private final class Placeholder: Sendable {}
private let placeholder = Placeholder()

extension Array where Element == AnyObject {
    /// Capacity for n more elements, its memory written once (RSS counted before the
    /// memory case starts measuring).
    mutating func reserveTouched(_ n: Int) {
        let old = count
        append(contentsOf: repeatElement(placeholder as AnyObject, count: n))
        removeLast(count - old)
    }
}

// @unchecked Sendable (all three): `handles` is only touched by the driver's thread;
// the scaling case's threads call dispatch(), which reads the immutable `let`s.

/// qtbus's Swift API: `bus.on(BenchEvent.self).next { }` on an isolated `QTEventBus()`,
/// `bus.dispatch(BenchEvent(...))`, `token.dispose()`.
final class QtbusLibrary: BenchLibrary, @unchecked Sendable {
    let bus = QTEventBus()
    private var handles: [AnyObject] = []
    /// Set: `connect` subscribes with `.freeWith(owner)`.
    var owner: AnyObject?

    init() {}

    func reserve(_ n: Int) { handles.reserveTouched(n) }

    func connect(_ n: Int) {
        for _ in 0..<n {
            if let owner {
                handles.append(bus.on(BenchEvent.self).freeWith(owner).next { _ in bench_count_inc() })
            } else {
                handles.append(bus.on(BenchEvent.self).next { _ in bench_count_inc() })
            }
        }
    }

    func dispatch(_ iterations: UInt64) {
        let bus = self.bus
        var i: UInt64 = 0
        while i < iterations {
            bus.dispatch(BenchEvent(value: Int(truncatingIfNeeded: i)))
            i &+= 1
        }
    }

    func subscribeDispose(_ iterations: UInt64) {
        let bus = self.bus
        for _ in 0..<iterations {
            let token = bus.on(BenchEvent.self).next { _ in bench_count_inc() }
            token.dispose()
        }
    }

    func disconnectAll() {
        for case let token as QTEventToken in handles { token.dispose() }
        handles.removeAll()
    }
}

/// Foundation's NotificationCenter (swift-corelibs-foundation here): block observers on
/// a private center, `post(name:object:userInfo:)` carrying the event in userInfo,
/// `removeObserver`.
final class NotificationCenterLibrary: BenchLibrary, @unchecked Sendable {
    let center = NotificationCenter()
    let name = Notification.Name("BenchEvent")
    private var handles: [AnyObject] = []

    init() {}

    func reserve(_ n: Int) { handles.reserveTouched(n) }

    func connect(_ n: Int) {
        for _ in 0..<n {
            handles.append(center.addObserver(forName: name, object: nil, queue: nil) { _ in bench_count_inc() })
        }
    }

    func dispatch(_ iterations: UInt64) {
        let center = self.center, name = self.name
        var i: UInt64 = 0
        while i < iterations {
            center.post(name: name, object: nil, userInfo: ["event": BenchEvent(value: Int(truncatingIfNeeded: i))])
            i &+= 1
        }
    }

    func subscribeDispose(_ iterations: UInt64) {
        let center = self.center, name = self.name
        for _ in 0..<iterations {
            let observer = center.addObserver(forName: name, object: nil, queue: nil) { _ in bench_count_inc() }
            center.removeObserver(observer)
        }
    }

    func disconnectAll() {
        for observer in handles { center.removeObserver(observer) }
        handles.removeAll()
    }
}

/// OpenCombine's `PassthroughSubject<BenchEvent, Never>`: `sink` subscribers, `send`,
/// `AnyCancellable.cancel()`.
final class OpenCombineLibrary: BenchLibrary, @unchecked Sendable {
    let subject = PassthroughSubject<BenchEvent, Never>()
    private var handles: [AnyObject] = []

    init() {}

    func reserve(_ n: Int) { handles.reserveTouched(n) }

    func connect(_ n: Int) {
        for _ in 0..<n {
            handles.append(subject.sink { _ in bench_count_inc() })
        }
    }

    func dispatch(_ iterations: UInt64) {
        let subject = self.subject
        var i: UInt64 = 0
        while i < iterations {
            subject.send(BenchEvent(value: Int(truncatingIfNeeded: i)))
            i &+= 1
        }
    }

    func subscribeDispose(_ iterations: UInt64) {
        let subject = self.subject
        for _ in 0..<iterations {
            let cancellable = subject.sink { _ in bench_count_inc() }
            cancellable.cancel()
        }
    }

    func disconnectAll() {
        for case let cancellable as AnyCancellable in handles { cancellable.cancel() }
        handles.removeAll()
    }
}

/// The limit: the closures in a Swift array, called in a loop; subscribe = append,
/// dispose = remove the last.  No lock, so not safe to change while another thread
/// dispatches; the scaling case only reads it from both threads, which shows what the
/// machine allows at that moment (two vCPUs may share one physical core).
///
/// Each closure sits in a struct field: an array of bare function values would store
/// them at the generic abstraction (event passed indirectly), adding a reabstraction
/// thunk on the way in and another on every call.
final class ClosureArrayLibrary: BenchLibrary, @unchecked Sendable {
    struct Handler {
        let call: @Sendable (BenchEvent) -> Void
    }

    private var handlers: ContiguousArray<Handler> = []
    /// Set: each closure `connect` adds first checks a weak reference to it (freeWith's
    /// limit).
    var owner: AnyObject?

    init() {}

    func reserve(_ n: Int) { handlers.reserveCapacity(handlers.count + n) }

    func connect(_ n: Int) {
        for _ in 0..<n {
            if let owner {
                final class Weak: @unchecked Sendable {
                    weak var object: AnyObject?
                    init(_ o: AnyObject) { object = o }
                }
                let weak = Weak(owner)
                handlers.append(Handler { _ in if weak.object != nil { bench_count_inc() } })
            } else {
                handlers.append(Handler { _ in bench_count_inc() })
            }
        }
    }

    func dispatch(_ iterations: UInt64) {
        handlers.withUnsafeBufferPointer { handlers in
            var i: UInt64 = 0
            while i < iterations {
                let event = BenchEvent(value: Int(truncatingIfNeeded: i))
                for h in handlers { h.call(event) }
                i &+= 1
            }
        }
    }

    func subscribeDispose(_ iterations: UInt64) {
        for _ in 0..<iterations {
            handlers.append(Handler { _ in bench_count_inc() })
            handlers.removeLast()
        }
    }

    func disconnectAll() { handlers.removeAll() }
}

// MARK: - Queued delivery

/// Counts deliveries on a serial queue and wakes `wait()` when the count reaches the
/// armed target.
///
/// @unchecked Sendable: `count` and `target` are written by the driver before it posts
/// anything (arm) and read by it after the semaphore (wait); in between only the one
/// serial queue touches them, one item at a time.  The semaphore orders the queue's
/// writes before the driver's reads.
final class QueuedCounter: @unchecked Sendable {
    private(set) var count: UInt64 = 0
    private var target: UInt64 = 0
    private let done = DispatchSemaphore(value: 0)

    func arm(_ n: UInt64) {
        count = 0
        target = n
    }

    @inline(__always)
    func hit() {
        count &+= 1
        if count == target { done.signal() }
    }

    func wait() { done.wait() }
}

/// Queued delivery through one serial queue: `run` posts n items and returns once the
/// handler has counted n.  burst: a gate item goes first and holds the queue until all
/// n are posted (no wake-up per item); else the queue runs while the items are posted.
protocol QueuedLibrary: AnyObject {
    var counter: QueuedCounter { get }
    /// Returns how many of the n items the library says it posted.
    func post(_ n: UInt64) -> UInt64
    var queue: DispatchQueue { get }
}

extension QueuedLibrary {
    func run(_ n: UInt64, burst: Bool) -> UInt64 {
        counter.arm(n)
        let gate = DispatchSemaphore(value: 0)
        if burst { queue.async { gate.wait() } }
        let posted = post(n)
        if burst { gate.signal() }
        counter.wait()
        return posted
    }
}

/// qtbus: one `.atQueue(serialQueue)` subscription, `bus.dispatch` per item.
final class QtbusQueued: QueuedLibrary {
    let bus = QTEventBus()
    let queue = DispatchQueue(label: "bench.queued.qtbus")
    let counter = QueuedCounter()
    private var token: QTEventToken?

    init() {
        let counter = self.counter
        token = bus.on(BenchEvent.self).atQueue(queue).next { _ in counter.hit() }
    }

    func post(_ n: UInt64) -> UInt64 {
        let bus = self.bus
        var posted: UInt64 = 0
        var i: UInt64 = 0
        while i < n {
            posted &+= UInt64(truncatingIfNeeded: bus.dispatch(BenchEvent(value: Int(truncatingIfNeeded: i))))
            i &+= 1
        }
        return posted
    }

    deinit { token?.dispose() }
}

/// The bare baseline: `serialQueue.async { count += 1 }`.
final class BareQueued: QueuedLibrary {
    let queue = DispatchQueue(label: "bench.queued.bare")
    let counter = QueuedCounter()

    func post(_ n: UInt64) -> UInt64 {
        let queue = self.queue, counter = self.counter
        var i: UInt64 = 0
        while i < n {
            queue.async { counter.hit() }
            i &+= 1
        }
        return n
    }
}

/// The owner of the freeWith row's subscriptions; lives through the row.
final class BenchOwner {}
