// Queues, payloads and queued deliveries.
//
// Queues are libdispatch queues driven through its C ABI (dispatch_async_f: one
// continuation, no Swift closure context).  The main queue is libdispatch's own, the
// queue Swift calls DispatchQueue.main; a C program pumps it through the eventfd that
// libdispatch pokes when main-queue work is posted (qtbus_main_fd / _drain / _wait).
//
// A queued delivery needs the event after `qtbus_dispatch` returned, so the first
// queued delivery of a dispatch copies type, subtype and bytes into one Payload, which
// every queued delivery of that dispatch shares by reference count; the event's
// object is released when the last reference goes.
import CQtbusShims
import Glibc

struct Queue {
    let dq: qtbus_dispatch_queue_t
    /// The creator's reference plus one per subscription using the queue.
    var refs: UInt64 = 1
    let isMain: Bool
}

/// Never freed; its only mutable field (refs) is not used for the main queue.
nonisolated(unsafe) let mainQueue: UnsafeMutablePointer<Queue> = {
    // Make libdispatch create the main queue's eventfd now: work posted before it
    // exists would not make it readable.
    _ = qtbus_main_queue_fd()
    let q = UnsafeMutablePointer<Queue>.allocate(capacity: 1)
    q.initialize(to: Queue(dq: qtbus_dq_main()!, isMain: true))
    return q
}()

func makeQueue(label: UnsafePointer<CChar>?) -> UnsafeMutablePointer<Queue> {
    let q = UnsafeMutablePointer<Queue>.allocate(capacity: 1)
    let dq = (label.map { qtbus_dq_create_serial($0) } ?? qtbus_dq_create_serial("qtbus.queue"))!
    q.initialize(to: Queue(dq: dq, isMain: false))
    return q
}

func retainQueue(_ q: UnsafeMutablePointer<Queue>) {
    if !q.pointee.isMain { _ = qtbus_atomic_fetch_add_u64(q.field(\.refs), 1) }
}

/// Work already posted keeps the libdispatch queue alive by itself.
func releaseQueue(_ q: UnsafeMutablePointer<Queue>) {
    guard !q.pointee.isMain, qtbus_atomic_fetch_sub_u64(q.field(\.refs), 1) == 1 else { return }
    qtbus_dq_release(q.pointee.dq)
    q.deinitialize(count: 1)
    q.deallocate()
}

/// Main-queue work items run by the current drain (touched on the main thread only).
nonisolated(unsafe) var mainWorkRun: Int32 = 0

@inline(__always)
private func countIfMain(_ isMain: Bool) {
    if isMain && qtbus_is_main_thread() { mainWorkRun &+= 1 }
}

// MARK: - Payloads

/// An event copied for later: header, then the bytes (NUL-terminated, 16-aligned, so
/// a C struct sent as bytes can be read in place), then the type and subtype.
struct Payload {
    var refs: UInt64 = 1
    var type: UnsafeMutablePointer<CChar>
    var subtype: UnsafeMutablePointer<CChar>?
    var data: UnsafeMutableRawPointer?
    var size: Int
    var object: UnsafeMutableRawPointer?
    var objectRelease: qtbus_release?
    /// A payload whose object this one shows but does not own (QTNoSubscriberEvent).
    var parent: UnsafeMutablePointer<Payload>?
    /// The request its deliveries carry; the payload holds a reference, so the request
    /// completes only after the last queued or backlogged delivery has run.
    var request: UnsafeMutablePointer<Request>? = nil
    /// Atomic: 1 once a queued delivery rides in this payload (see `enqueueDelivery`).
    var carrying: UInt32 = 0
    var carried: Delivery? = nil
}

private let payloadHeader = (MemoryLayout<Payload>.stride + 15) & ~15

func makePayload(type: CName, subtype: CName?, data: UnsafeRawPointer?, size: Int,
                 object: UnsafeMutableRawPointer?, objectRelease: qtbus_release?,
                 parent: UnsafeMutablePointer<Payload>?,
                 request: UnsafeMutablePointer<Request>? = nil) -> UnsafeMutablePointer<Payload> {
    let subtypeLength = subtype.map { $0.length + 1 } ?? 0
    let raw = UnsafeMutableRawPointer.allocate(
        byteCount: payloadHeader + size + 1 + type.length + 1 + subtypeLength, alignment: 16)
    let bytes = raw + payloadHeader
    if let data, size > 0 { bytes.copyMemory(from: data, byteCount: size) }
    bytes.storeBytes(of: 0, toByteOffset: size, as: UInt8.self)
    let typeCopy = (bytes + size + 1).assumingMemoryBound(to: CChar.self)
    typeCopy.initialize(from: type.bytes, count: type.length)
    typeCopy[type.length] = 0
    var subtypeCopy: UnsafeMutablePointer<CChar>? = nil
    if let subtype {
        let s = typeCopy + type.length + 1
        s.initialize(from: subtype.bytes, count: subtype.length)
        s[subtype.length] = 0
        subtypeCopy = s
    }
    if let parent { payloadRetain(parent) }
    if let request { requestRetain(request) }
    let p = raw.bindMemory(to: Payload.self, capacity: 1)
    p.initialize(to: Payload(type: typeCopy, subtype: subtypeCopy, data: size > 0 ? bytes : nil, size: size,
                             object: object, objectRelease: objectRelease, parent: parent, request: request))
    return p
}

@inline(__always)
func payloadRetain(_ p: UnsafeMutablePointer<Payload>) {
    _ = qtbus_atomic_fetch_add_u64(p.field(\.refs), 1)
}

func payloadRelease(_ p: UnsafeMutablePointer<Payload>) {
    guard qtbus_atomic_fetch_sub_u64(p.field(\.refs), 1) == 1 else { return }
    let object = p.pointee.object
    let release = p.pointee.objectRelease
    let parent = p.pointee.parent
    let request = p.pointee.request
    p.deinitialize(count: 1)
    UnsafeMutableRawPointer(p).deallocate()
    release?(object)
    if let parent { payloadRelease(parent) }
    if let request { requestRelease(request) }
}

/// The CName of a payload's type (its length is known; the hash is recomputed only
/// on the cold paths that need it).
func payloadTypeName(_ p: UnsafeMutablePointer<Payload>) -> CName {
    CName(UnsafePointer(p.pointee.type))!
}

func payloadSubtypeName(_ p: UnsafeMutablePointer<Payload>) -> CName? {
    p.pointee.subtype.flatMap { CName(UnsafePointer($0)) }
}

// MARK: - Queued deliveries

struct Delivery {
    let sub: UnsafeMutablePointer<Subscription>
    let payload: UnsafeMutablePointer<Payload>
    /// The delivery that claimed a ONCE subscription runs although it is no longer live.
    let once: Bool
}

/// Posts one delivery of `payload` (whose reference it takes) to `sub`'s queue.
///
/// The payload was allocated for this dispatch anyway, so the first delivery posted
/// with it rides inside it (claimed by CAS: a kept sticky payload is shared between
/// threads); only further ones allocate a Delivery.  One queued subscriber then costs
/// one allocation a dispatch besides libdispatch's own continuation.
func enqueueDelivery(_ sub: UnsafeMutablePointer<Subscription>, _ payload: UnsafeMutablePointer<Payload>, once: Bool) {
    let extra = sub.pointee.extra!
    _ = qtbus_atomic_fetch_add_u64(extra.field(\.posted), 1)
    let dq = extra.pointee.queue!.pointee.dq
    let delivery = Delivery(sub: sub, payload: payload, once: once)
    if qtbus_atomic_cas_u32(payload.field(\.carrying), 0, 1) {
        payload.field(\.carried).pointee = delivery
        qtbus_dq_async(dq, payload) { raw in
            let payload = raw!.assumingMemoryBound(to: Payload.self)
            run(payload.field(\.carried).pointee!)
        }
        return
    }
    let d = UnsafeMutablePointer<Delivery>.allocate(capacity: 1)
    d.initialize(to: delivery)
    qtbus_dq_async(dq, d) { raw in
        let d = raw!.assumingMemoryBound(to: Delivery.self)
        let delivery = d.move()
        d.deallocate()
        run(delivery)
    }
}

/// Runs a queued delivery on its queue and drops its references.
private func run(_ d: Delivery) {
    // Lifetime rule 2: a delivery queued before its subscription was disposed is dropped.
    if d.once || SubState.isLive(d.sub) {
        var view = EventView(payload: d.payload, queued: true)
        withUnsafeMutablePointer(to: &view) { d.sub.pointee.handler(OpaquePointer($0), d.sub.pointee.userdata) }
        countIfMain(Subscription.queue(d.sub)!.pointee.isMain)
    }
    payloadRelease(d.payload)
    // Last: once `done` catches up with `posted`, the subscription may be released and
    // its memory reused (see `afterGracePeriod`).
    let done = d.sub.pointee.extra!.field(\.done)
    qtbus_atomic_store_u64(done, qtbus_atomic_load_u64(done) + 1)
}

// MARK: - Posting whole dispatches (qtbus_dispatch_on_bus_queue / _on_main)

private struct BusPost {
    let bus: UnsafeMutablePointer<Bus>
    let payload: UnsafeMutablePointer<Payload>
    let flags: UInt32
    let isMain: Bool
}

/// Posts a dispatch of `payload` (its reference is taken) to run later on `queue`.
func postDispatch(_ bus: UnsafeMutablePointer<Bus>, _ payload: UnsafeMutablePointer<Payload>,
                  flags: UInt32, on queue: qtbus_dispatch_queue_t, isMain: Bool) {
    pinBus(bus)
    let post = UnsafeMutablePointer<BusPost>.allocate(capacity: 1)
    post.initialize(to: BusPost(bus: bus, payload: payload, flags: flags, isMain: isMain))
    qtbus_dq_async(queue, post) { raw in
        let post = raw!.assumingMemoryBound(to: BusPost.self)
        let (bus, payload, flags, isMain) = (post.pointee.bus, post.pointee.payload, post.pointee.flags, post.pointee.isMain)
        post.deinitialize(count: 1)
        post.deallocate()
        withEpoch {
            var event = Outgoing(payload: payload)
            if dispatchEvent(bus, &event, flags: flags) < 0 { payloadRelease(payload) }
        }
        countIfMain(isMain)
        unpinBus(bus)
    }
}

// MARK: - Main queue pump

func mainDrain() -> Int32 {
    guard qtbus_is_main_thread() else { return QTBUS_EINVAL.rawValue }
    _ = mainQueue
    // Saved and restored so a main-queue handler that drains again counts correctly.
    let outer = mainWorkRun
    mainWorkRun = 0
    qtbus_main_queue_run()
    let n = mainWorkRun
    mainWorkRun = outer &+ n
    return n
}

func mainWait(_ timeoutMs: Int32) -> Int32 {
    guard qtbus_is_main_thread() else { return QTBUS_EINVAL.rawValue }
    _ = mainQueue
    if qtbus_main_queue_poll(timeoutMs) <= 0 { return 0 }
    return mainDrain()
}
