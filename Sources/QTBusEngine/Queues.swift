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
//
// Batches: libdispatch's own cost per posted item (dispatch_async_f, the worker's
// wake-up and its continuation) is most of what a queued delivery costs, so queues made
// by qtbus_queue_create do not post one item per delivery.  Work for such a queue goes
// onto its lock-free list (a Treiber stack of WorkNodes); the push that finds the list
// empty posts one libdispatch item, which takes the whole list at once, restores its
// order and runs it.  FIFO holds: every node is run by an item posted no later than the
// node was pushed, and an item takes everything pushed before it runs.  Only qtbus posts
// to these queues (the C API exposes no other way), so running a batch inside one item
// reorders nothing anyone else posted.  The main queue is not batched: C and Swift
// main-queue work must stay one FIFO with DispatchQueue.main's own blocks.
import CQtbusShims
import Glibc

struct Queue {
    let dq: qtbus_dispatch_queue_t
    /// The creator's reference plus one per subscription using the queue, plus one
    /// while a batch item is posted.
    var refs: UInt64 = 1
    let isMain: Bool
    /// Whether work goes through `batch` (created queues) or straight to libdispatch.
    let batched: Bool
    /// Atomic: the newest WorkNode not yet taken by a batch item (a stack).
    var batch: UnsafeMutableRawPointer? = nil
}

/// The head of every piece of work a queue runs: a delivery, a release, an execution.
struct WorkNode {
    var next: UnsafeMutablePointer<WorkNode>? = nil
    let run: @convention(c) (UnsafeMutableRawPointer?) -> Void
}

/// Never freed; its only mutable field (refs) is not used for the main queue.
nonisolated(unsafe) let mainQueue: UnsafeMutablePointer<Queue> = {
    // Make libdispatch create the main queue's eventfd now: work posted before it
    // exists would not make it readable.
    _ = qtbus_main_queue_fd()
    let q = UnsafeMutablePointer<Queue>.allocate(capacity: 1)
    q.initialize(to: Queue(dq: qtbus_dq_main()!, isMain: true, batched: false))
    return q
}()

func makeQueue(label: UnsafePointer<CChar>?) -> UnsafeMutablePointer<Queue> {
    let q = UnsafeMutablePointer<Queue>.allocate(capacity: 1)
    let dq = (label.map { qtbus_dq_create_serial($0) } ?? qtbus_dq_create_serial("qtbus.queue"))!
    q.initialize(to: Queue(dq: dq, isMain: false, batched: true))
    return q
}

/// Runs `node` on `q`: `node.run(node)` later, after everything submitted to `q` before.
/// The node must stay valid until it runs; its `run` frees it if it needs freeing.
func submit(_ q: UnsafeMutablePointer<Queue>, _ node: UnsafeMutablePointer<WorkNode>) {
    guard q.pointee.batched else {
        qtbus_dq_async(q.pointee.dq, node) { raw in
            let node = raw!.assumingMemoryBound(to: WorkNode.self)
            node.pointee.run(raw)
        }
        return
    }
    let head = UnsafeMutablePointer<UnsafeMutableRawPointer?>(q.field(\.batch))
    var old = qtbus_atomic_load_ptr(head)
    repeat {
        node.pointee.next = old?.assumingMemoryBound(to: WorkNode.self)
    } while !qtbus_atomic_cas_ptr(head, &old, node)
    guard old == nil else { return }  // an item posted earlier will take this node
    // The item keeps the Queue alive: its creator may release it meanwhile.
    retainQueue(q)
    qtbus_dq_async(q.pointee.dq, q) { raw in runBatch(raw!.assumingMemoryBound(to: Queue.self)) }
}

/// A batch item: takes the whole list, reverses it into submission order, runs it.
private func runBatch(_ q: UnsafeMutablePointer<Queue>) {
    let head = UnsafeMutablePointer<UnsafeMutableRawPointer?>(q.field(\.batch))
    var cursor = qtbus_atomic_exchange_ptr(head, nil)?.assumingMemoryBound(to: WorkNode.self)
    var ordered: UnsafeMutablePointer<WorkNode>? = nil
    while let node = cursor {
        cursor = node.pointee.next
        node.pointee.next = ordered
        ordered = node
    }
    while let node = ordered {
        ordered = node.pointee.next  // read first: run may free the node
        node.pointee.run(UnsafeMutableRawPointer(node))
    }
    releaseQueue(q)
}

/// Work that is not a delivery (a release, an execution): `work(context)` on `q`, in
/// FIFO order with its deliveries.  Allocates a node; these are rare next to deliveries.
func submit(_ q: UnsafeMutablePointer<Queue>, context: UnsafeMutableRawPointer?,
            _ work: @convention(c) (UnsafeMutableRawPointer?) -> Void) {
    struct Item {
        var node: WorkNode
        let context: UnsafeMutableRawPointer?
        let work: @convention(c) (UnsafeMutableRawPointer?) -> Void
    }
    let item = UnsafeMutablePointer<Item>.allocate(capacity: 1)
    item.initialize(to: Item(node: WorkNode(run: { raw in
        let item = raw!.assumingMemoryBound(to: Item.self)
        let (context, work) = (item.pointee.context, item.pointee.work)
        item.deinitialize(count: 1)
        item.deallocate()
        work(context)
    }), context: context, work: work))
    submit(q, UnsafeMutableRawPointer(item).assumingMemoryBound(to: WorkNode.self))
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
func countIfMain(_ isMain: Bool) {
    if isMain && qtbus_is_main_thread() { mainWorkRun &+= 1 }
}

// MARK: - Payloads

/// An event copied for later: this 80-byte header, then the bytes (NUL-terminated,
/// 16-aligned, so a C struct sent as bytes can be read in place), then the type and
/// subtype, NUL-terminated.  Where they are is computed (see the accessors below), not
/// stored: with the header at 80 bytes, an event with up to about 40 bytes of data and
/// names fits glibc's fast bins (blocks up to 128 bytes), which a queued delivery frees
/// on the queue's thread and the next dispatch takes back cheaply; one size class up,
/// the free goes through the unsorted bin (bench-c's "queued, serial queue (stream)"
/// row shows the difference).
struct Payload {
    var refs: UInt64 = 1
    var size: Int
    var object: UnsafeMutableRawPointer?
    var objectRelease: qtbus_release?
    /// A payload whose object this one shows but does not own (QTNoSubscriberEvent).
    var parent: UnsafeMutablePointer<Payload>?
    /// The request its deliveries carry; the payload holds a reference, so the request
    /// completes only after the last queued or backlogged delivery has run.
    var request: UnsafeMutablePointer<Request>?
    let typeLength: UInt8
    /// 0: no subtype (names are 1 to 255 bytes).
    let subtypeLength: UInt8
    /// Written with `carried` by the delivery that set `carrying`.
    var carriedOnce = false
    /// Atomic: 1 once a queued delivery rides in this payload (see `enqueueDelivery`).
    var carrying: UInt32 = 0
    /// Initialized by the delivery that set `carrying` (raw storage until then).
    var carried = CarriedDelivery.unset
}

/// The first queued delivery of a payload, inside it (its payload is where it lives).
struct CarriedDelivery {
    var node: WorkNode
    var sub: UnsafeMutablePointer<Subscription>?

    static var unset: CarriedDelivery { CarriedDelivery(node: WorkNode(run: { _ in }), sub: nil) }
}

private let payloadHeader = (MemoryLayout<Payload>.stride + 15) & ~15

extension UnsafeMutablePointer where Pointee == Payload {
    @inline(__always) var bytes: UnsafeMutableRawPointer { UnsafeMutableRawPointer(self) + payloadHeader }
    @inline(__always) var data: UnsafeMutableRawPointer? { pointee.size > 0 ? bytes : nil }
    @inline(__always) var type: UnsafeMutablePointer<CChar> {
        (bytes + pointee.size + 1).assumingMemoryBound(to: CChar.self)
    }
    @inline(__always) var subtype: UnsafeMutablePointer<CChar>? {
        pointee.subtypeLength == 0 ? nil : type + Int(pointee.typeLength) + 1
    }
}

func makePayload(type: CName, subtype: CName?, data: UnsafeRawPointer?, size: Int,
                 object: UnsafeMutableRawPointer?, objectRelease: qtbus_release?,
                 parent: UnsafeMutablePointer<Payload>?,
                 request: UnsafeMutablePointer<Request>? = nil) -> UnsafeMutablePointer<Payload> {
    let subtypeLength = subtype.map { $0.length + 1 } ?? 0
    // malloc, not allocate(byteCount:alignment: 16): the Swift runtime sends an explicit
    // 16-byte alignment to posix_memalign (callgrind: ~60 instructions more a payload),
    // while glibc's malloc already returns 16-aligned blocks on every 64-bit target.
    guard let raw = malloc(payloadHeader + size + 1 + type.length + 1 + subtypeLength) else {
        fatalError("qtbus: out of memory copying an event")
    }
    let bytes = raw + payloadHeader
    if let data, size > 0 { bytes.copyMemory(from: data, byteCount: size) }
    bytes.storeBytes(of: 0, toByteOffset: size, as: UInt8.self)
    let typeCopy = (bytes + size + 1).assumingMemoryBound(to: CChar.self)
    typeCopy.initialize(from: type.bytes, count: type.length)
    typeCopy[type.length] = 0
    if let subtype {
        let s = typeCopy + type.length + 1
        s.initialize(from: subtype.bytes, count: subtype.length)
        s[subtype.length] = 0
    }
    if let parent { payloadRetain(parent) }
    if let request { requestRetain(request) }
    let p = raw.bindMemory(to: Payload.self, capacity: 1)
    p.initialize(to: Payload(size: size, object: object, objectRelease: objectRelease, parent: parent,
                             request: request, typeLength: UInt8(truncatingIfNeeded: type.length),
                             subtypeLength: UInt8(truncatingIfNeeded: subtype?.length ?? 0)))
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
    free(p)
    release?(object)
    if let parent { payloadRelease(parent) }
    if let request { requestRelease(request) }
}

/// The CName of a payload's type (its length is known; the hash is recomputed only
/// on the cold paths that need it).
func payloadTypeName(_ p: UnsafeMutablePointer<Payload>) -> CName {
    CName(UnsafePointer(p.type))!
}

func payloadSubtypeName(_ p: UnsafeMutablePointer<Payload>) -> CName? {
    p.subtype.flatMap { CName(UnsafePointer($0)) }
}

// MARK: - Queued deliveries

struct Delivery {
    /// First: a Delivery is the WorkNode its queue runs.
    var node: WorkNode
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
    let queue = extra.pointee.queue!
    if qtbus_atomic_cas_u32(payload.field(\.carrying), 0, 1) {
        payload.field(\.carriedOnce).pointee = once
        let carried = payload.field(\.carried)
        carried.initialize(to: CarriedDelivery(node: WorkNode(run: { raw in
            // The payload outlives this: `run` drops the delivery's reference last.
            let payload = (raw! - carriedOffset).assumingMemoryBound(to: Payload.self)
            run(Delivery(node: WorkNode(run: { _ in }), sub: payload.pointee.carried.sub!, payload: payload,
                         once: payload.pointee.carriedOnce))
        }), sub: sub))
        submit(queue, UnsafeMutableRawPointer(carried).assumingMemoryBound(to: WorkNode.self))
        return
    }
    let d = UnsafeMutablePointer<Delivery>.allocate(capacity: 1)
    d.initialize(to: Delivery(node: WorkNode(run: { raw in
        let d = raw!.assumingMemoryBound(to: Delivery.self)
        let delivery = d.move()
        d.deallocate()
        run(delivery)
    }), sub: sub, payload: payload, once: once))
    submit(queue, UnsafeMutableRawPointer(d).assumingMemoryBound(to: WorkNode.self))
}

private let carriedOffset = MemoryLayout<Payload>.offset(of: \Payload.carried)!

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
