// SPDX-License-Identifier: MIT
// Shared helpers for the engine tests: a serialized root suite, probes (userdata that
// counts calls and releases), C-string plumbing, pthreads and bounded waits.
//
// Every engine suite is nested in `Engine`, itself in the root suite QTBusTests
// (QTEventBusTestSupport), which is `.serialized`: lifetime rule 1 ("if no dispatch is
// in progress anywhere, release runs before dispose returns") is a statement about the
// whole process, so engine tests must not overlap one another, nor any other test.
import Testing
import Glibc
import Synchronization
import CQtbusShims
import QTEventBusTestSupport
@testable import QTBusEngine

extension QTBusTests {
    @Suite("QTBus engine")
    struct Engine {}
}

typealias Engine = QTBusTests.Engine

// MARK: - Status codes

let OK = QTBUS_OK.rawValue
let EINVAL = QTBUS_EINVAL.rawValue
let ESTALE = QTBUS_ESTALE.rawValue
let EJSON = QTBUS_EJSON.rawValue
let ECLOSED = QTBUS_ECLOSED.rawValue

let ONCE = UInt32(QTBUS_SUB_ONCE)
let REPLAY = UInt32(QTBUS_SUB_REPLAY)
let STICKY = UInt32(QTBUS_EVENT_STICKY)

// MARK: - Threads (pthreads, no Foundation / Dispatch)

private final class ThreadBody {
    let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
}

/// A pthread running `body`; `join()` waits for it.
final class TestThread: @unchecked Sendable {
    private var tid = pthread_t()
    let finished = OneShotFlag()

    init(_ body: @escaping () -> Void) {
        let box = Unmanaged.passRetained(
            ThreadBody { [finished] in
                body()
                finished.set()
            }
        ).toOpaque()
        let rc = pthread_create(
            &tid, nil,
            { raw in
                let b = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
                b.body()
                return nil
            }, box)
        precondition(rc == 0, "pthread_create failed")
    }

    var id: pthread_t { tid }

    /// Joins if the thread finished within `seconds`; false (not joined) otherwise.
    @discardableResult
    func join(_ seconds: Double = 10) -> Bool {
        guard finished.wait(seconds) else { return false }
        pthread_join(tid, nil)
        return true
    }
}

/// The kernel id of the calling thread ("/proc/thread-self" -> "<pid>/task/<tid>").
func currentTID() -> Int32 {
    var buf = [CChar](repeating: 0, count: 128)
    guard readlink("/proc/thread-self", &buf, 127) > 0 else { return 0 }
    return Int32(String(cString: buf).split(separator: "/").last ?? "") ?? 0
}

// MARK: - Logs and probes

/// Probes and object counters are handed to the engine as raw pointers, and a release
/// hook may legitimately run after the test function's last use of them (for instance
/// from a deferred qtbus_bus_destroy, or later on another thread when a test fails).
/// They are never freed, so a late callback can never touch freed memory.
private func keepForever(_ object: AnyObject) { _ = Unmanaged.passRetained(object) }  // leaked on purpose

/// Userdata for a subscription: logs "name:data" per call, counts calls and releases,
/// and runs an optional action inside the handler.
final class Probe: @unchecked Sendable {
    let name: String
    let log: Recorder<String>
    /// Run inside the handler, after logging.  Set before subscribing.
    var action: ((OpaquePointer?) -> Void)?
    /// Run inside the release hook, after counting.  Set before subscribing.
    var onRelease: (() -> Void)?
    private let callCount = Atomic<Int>(0)
    private let releaseCount = Atomic<Int>(0)
    private let releaseThreadID = Atomic<UInt>(0)

    init(_ name: String, _ log: Recorder<String> = Recorder<String>()) {
        self.name = name
        self.log = log
        keepForever(self)
    }

    var calls: Int { callCount.load(ordering: .sequentiallyConsistent) }
    var releases: Int { releaseCount.load(ordering: .sequentiallyConsistent) }
    /// pthread_self() of the thread the (last) release ran on; 0 before.
    var releaseThread: pthread_t { pthread_t(releaseThreadID.load(ordering: .sequentiallyConsistent)) }

    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    fileprivate func handle(_ event: OpaquePointer?) {
        callCount.add(1, ordering: .sequentiallyConsistent)
        log.append("\(name):\(eventData(event))")
        action?(event)
    }

    fileprivate func released() {
        releaseThreadID.store(UInt(pthread_self()), ordering: .sequentiallyConsistent)
        releaseCount.add(1, ordering: .sequentiallyConsistent)
        onRelease?()
    }
}

/// The C handler every probe subscription uses (C handlers cannot capture: the probe
/// travels as userdata).
let probeHandler: qtbus_handler = { event, userdata in
    Unmanaged<Probe>.fromOpaque(userdata!).takeUnretainedValue().handle(event)
}

let probeRelease: qtbus_release = { userdata in
    Unmanaged<Probe>.fromOpaque(userdata!).takeUnretainedValue().released()
}

/// A handler that does nothing, for subscriptions whose calls are not observed.
let nopHandler: qtbus_handler = { _, _ in }

/// The event's data as a string ("" when it has none).
func eventData(_ event: OpaquePointer?) -> String {
    var size = 0
    guard let data = _qtbus_event_data(event, &size), size > 0 else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
}

func eventSubtype(_ event: OpaquePointer?) -> String? {
    _qtbus_event_subtype(event).map { String(cString: $0) }
}

func eventType(_ event: OpaquePointer?) -> String? {
    _qtbus_event_type(event).map { String(cString: $0) }
}

// MARK: - Object payloads with a counted release

/// Counts object_release calls for event objects.
final class ObjectCounter: @unchecked Sendable {
    private let count = Atomic<Int>(0)
    init() { keepForever(self) }
    var releases: Int { count.load(ordering: .sequentiallyConsistent) }
    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    fileprivate func released() { count.add(1, ordering: .sequentiallyConsistent) }
}

let objectRelease: qtbus_release = { raw in
    Unmanaged<ObjectCounter>.fromOpaque(raw!).takeUnretainedValue().released()
}

// MARK: - C strings

/// Runs `body` with a NUL-terminated copy of `bytes` (which must not contain NUL).
func withCBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<CChar>) -> R) -> R {
    let terminated = bytes + [0]
    return terminated.withUnsafeBufferPointer { buf in
        buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: terminated.count) { body($0) }
    }
}

func withOptionalCString<R>(_ s: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let s else { return body(nil) }
    return s.withCString { body($0) }
}

/// Runs `body` with a C array of C strings (malloc'd copies, freed afterwards).
func withCStringArray<R>(_ strings: [[UInt8]], _ body: (UnsafePointer<UnsafePointer<CChar>?>?, Int) -> R) -> R {
    let copies: [UnsafeMutablePointer<CChar>] = strings.map { bytes in
        let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
        for (i, b) in bytes.enumerated() { p[i] = CChar(bitPattern: b) }
        p[bytes.count] = 0
        return p
    }
    defer { copies.forEach { $0.deallocate() } }
    let pointers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
    return pointers.withUnsafeBufferPointer { body(strings.isEmpty ? nil : $0.baseAddress, strings.count) }
}

// MARK: - Subscribe / dispatch wrappers over the public entry points

/// qtbus_subscribe with a probe as userdata (and probeRelease unless `release` is false).
func trySubscribe(
    _ bus: OpaquePointer?, _ type: String, _ probe: Probe, subtypes: [String] = [],
    priority: Int32 = 0, flags: UInt32 = 0, queue: OpaquePointer? = nil,
    bag: qtbus_bag = qtbus_bag(id: 0), release: Bool = true
) -> (status: Int32, token: qtbus_token) {
    subscribeBytes(
        bus, Array(type.utf8), probe, subtypes: subtypes.map { Array($0.utf8) }, priority: priority,
        flags: flags, queue: queue, bag: bag, release: release)
}

func subscribeBytes(
    _ bus: OpaquePointer?, _ type: [UInt8], _ probe: Probe, subtypes: [[UInt8]] = [],
    priority: Int32 = 0, flags: UInt32 = 0, queue: OpaquePointer? = nil,
    bag: qtbus_bag = qtbus_bag(id: 0), release: Bool = true
) -> (status: Int32, token: qtbus_token) {
    var token = qtbus_token(id: 0xDEAD_BEEF)
    let status = withCBytes(type) { t in
        withCStringArray(subtypes) { names, count in
            var options = qtbus_sub_options()
            options.subtypes = names
            options.subtype_count = count
            options.queue = queue
            options.bag = bag
            options.priority = priority
            options.flags = flags
            return _qtbus_subscribe(
                bus, t, &options, probeHandler, probe.userdata,
                release ? probeRelease : nil, &token)
        }
    }
    return (status, token)
}

/// Subscribes and records an issue when it fails; returns the token.
@discardableResult
func mustSubscribe(
    _ bus: OpaquePointer?, _ type: String, _ probe: Probe, subtypes: [String] = [],
    priority: Int32 = 0, flags: UInt32 = 0, queue: OpaquePointer? = nil,
    bag: qtbus_bag = qtbus_bag(id: 0), release: Bool = true,
    sourceLocation: SourceLocation = #_sourceLocation
) -> qtbus_token {
    let r = trySubscribe(
        bus, type, probe, subtypes: subtypes, priority: priority, flags: flags, queue: queue,
        bag: bag, release: release)
    #expect(r.status == OK, "subscribe \(type) failed: \(r.status)", sourceLocation: sourceLocation)
    #expect(r.token.id != 0, sourceLocation: sourceLocation)
    return r.token
}

/// qtbus_dispatch of an event whose data is `data`'s UTF-8 bytes.
@discardableResult
func dispatch(
    _ bus: OpaquePointer?, _ type: String, subtype: String? = nil, data: String? = nil,
    object: UnsafeMutableRawPointer? = nil, release: qtbus_release? = nil, flags: UInt32 = 0
) -> Int32 {
    dispatchBytes(
        bus, Array(type.utf8), subtype: subtype.map { Array($0.utf8) }, data: data,
        object: object, release: release, flags: flags)
}

@discardableResult
func dispatchBytes(
    _ bus: OpaquePointer?, _ type: [UInt8], subtype: [UInt8]? = nil, data: String? = nil,
    object: UnsafeMutableRawPointer? = nil, release: qtbus_release? = nil,
    flags: UInt32 = 0
) -> Int32 {
    let bytes = data.map { Array($0.utf8) } ?? []
    return withCBytes(type) { t in
        let go: (UnsafePointer<CChar>?) -> Int32 = { s in
            bytes.withUnsafeBytes { raw in
                var desc = qtbus_event_desc(
                    type: t, subtype: s, data: bytes.isEmpty ? nil : raw.baseAddress,
                    size: bytes.count, object: object, object_release: release,
                    flags: flags, headers: nil, header_count: 0)
                return _qtbus_dispatch(bus, &desc)
            }
        }
        if let subtype { return withCBytes(subtype) { go($0) } }
        return go(nil)
    }
}

func countSubscribers(_ bus: OpaquePointer?, _ type: String, _ subtype: String? = nil) -> Int32 {
    type.withCString { t in withOptionalCString(subtype) { _qtbus_subscriber_count(bus, t, $0) } }
}

func stickyClear(_ bus: OpaquePointer?, _ type: String, _ subtype: String? = nil) -> Int32 {
    type.withCString { t in withOptionalCString(subtype) { _qtbus_sticky_clear(bus, t, $0) } }
}

// MARK: - Buses

func newBus(sourceLocation: SourceLocation = #_sourceLocation) -> OpaquePointer {
    let bus = _qtbus_bus_create()
    #expect(bus != nil, sourceLocation: sourceLocation)
    return bus!
}

/// Waits (bounded) until no retired object is waiting for a grace period, so that a
/// test starts with the reclaimer idle (queued work of an earlier test may still be
/// finishing on a libdispatch thread).
func settle() {
    _ = waitUntil { qtshim_pending_load() == 0 }
    // And no dispatch is in progress anywhere: a dispose is then released at once.
    // (Bus and probe are never freed: a deferred release may still reach them later.)
    _ = waitUntil {
        let t = trySubscribe(settleBus, "Settle", settleProbe).token
        let before = settleProbe.releases
        _ = _qtbus_token_dispose(t)
        return settleProbe.releases == before + 1
    }
}

private let settleProbe = Probe("settle")
nonisolated(unsafe) private let settleBus = _qtbus_bus_create()!
