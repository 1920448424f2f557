// SPDX-License-Identifier: MIT
// Payloads: an event copied for deliveries that outlive its dispatch.
//
// A queued delivery needs the event after `qtbus_dispatch` returned, so the first
// queued delivery of a dispatch copies type, subtype and bytes into one Payload, which
// every queued delivery of that dispatch shares by reference count; the event's
// object is released when the last reference goes.
import CQtbusShims
import CQtbusLibc

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
    /// `stickyMark` and `headersMark` (a byte, not two Bools: the header stays 80 bytes).
    var marks: UInt8 = 0
    /// Atomic: 1 once a queued delivery rides in this payload (see `enqueueDelivery`);
    /// `pooled` for a copy in a bounded queue's block, in which nothing rides.
    var carrying: UInt32 = 0
    /// Initialized by the delivery that set `carrying` (raw storage until then).
    var carried = CarriedDelivery.unset
}

extension Payload {
    static let pooled: UInt32 = 2
    static let stickyMark: UInt8 = 1
    /// The event has headers: a reference to its HeaderBlock follows the names
    /// (`headersSlot`), where a payload without headers spends no byte on it.
    static let headersMark: UInt8 = 2

    /// The payload of a sticky dispatch (set under the registry lock when it is kept,
    /// before any delivery of it).
    var sticky: Bool {
        get { marks & Payload.stickyMark != 0 }
        set { marks = newValue ? marks | Payload.stickyMark : marks & ~Payload.stickyMark }
    }
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
    /// Where the headers' reference is kept (only with `headersMark`): after the names,
    /// 8-aligned.
    @inline(__always) var headersSlot: UnsafeMutablePointer<UnsafeMutablePointer<HeaderBlock>?> {
        let end =
            pointee.size + 1 + Int(pointee.typeLength) + 1
            + (pointee.subtypeLength == 0 ? 0 : Int(pointee.subtypeLength) + 1)
        return (bytes + ((end + 7) & ~7)).assumingMemoryBound(to: UnsafeMutablePointer<HeaderBlock>?.self)
    }
    /// The event's headers (nil: none).
    @inline(__always) var headers: UnsafeMutablePointer<HeaderBlock>? {
        pointee.marks & Payload.headersMark == 0 ? nil : headersSlot.pointee
    }
}

/// A copy of an event, holding one reference; nil when out of memory (then nothing was
/// retained and the object is still the caller's).
func makePayload(
    type: CName, subtype: CName?, data: UnsafeRawPointer?, size: Int,
    object: UnsafeMutableRawPointer?, objectRelease: qtbus_release?,
    parent: UnsafeMutablePointer<Payload>?,
    request: UnsafeMutablePointer<Request>? = nil, headers: UnsafeMutablePointer<HeaderBlock>? = nil
) -> UnsafeMutablePointer<Payload>? {
    // malloc, not allocate(byteCount:alignment: 16): the Swift runtime sends an explicit
    // 16-byte alignment to posix_memalign, which costs (docs/perf-notes.md, "Payloads
    // come from malloc"), while glibc's malloc already returns 16-aligned blocks on every
    // 64-bit target.
    guard let raw = malloc(payloadBytes(size: size, type: type, subtype: subtype, headers: headers)) else { return nil }
    return fillPayload(
        raw, type: type, subtype: subtype, data: data, size: size, object: object,
        objectRelease: objectRelease, parent: parent, request: request, headers: headers)
}

/// The bytes a Payload of this event takes.
@inline(__always)
func payloadBytes(size: Int, type: CName, subtype: CName?, headers: UnsafeMutablePointer<HeaderBlock>? = nil) -> Int {
    let end = size + 1 + type.length + 1 + (subtype.map { $0.length + 1 } ?? 0)
    return payloadHeader + (headers == nil ? end : (end + 7) & ~7 + MemoryLayout<UnsafeRawPointer>.size)
}

/// A copy of an event made in a bounded queue's block (PayloadPool.swift), when one is
/// free and the copy fits it; nil otherwise (nothing was taken or retained).
func makePooledPayload(
    _ pool: UnsafeMutablePointer<PayloadPool>, type: CName, subtype: CName?,
    data: UnsafeRawPointer?, size: Int, object: UnsafeMutableRawPointer?,
    objectRelease: qtbus_release?,
    request: UnsafeMutablePointer<Request>?, headers: UnsafeMutablePointer<HeaderBlock>?
) -> UnsafeMutablePointer<Payload>? {
    guard payloadBytes(size: size, type: type, subtype: subtype, headers: headers) <= PayloadPool.payloadRoom,
        let raw = pool.take()
    else { return nil }
    let p = fillPayload(
        raw, type: type, subtype: subtype, data: data, size: size, object: object,
        objectRelease: objectRelease, parent: nil, request: request, headers: headers)
    p.pointee.carrying = Payload.pooled
    return p
}

/// Copies the event into `raw` (`payloadBytes` long) and makes it a Payload.
@inline(__always)
private func fillPayload(
    _ raw: UnsafeMutableRawPointer, type: CName, subtype: CName?, data: UnsafeRawPointer?,
    size: Int, object: UnsafeMutableRawPointer?, objectRelease: qtbus_release?,
    parent: UnsafeMutablePointer<Payload>?,
    request: UnsafeMutablePointer<Request>?, headers: UnsafeMutablePointer<HeaderBlock>?
) -> UnsafeMutablePointer<Payload> {
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
    if let parent { parent.retain() }
    if let request { request.retain() }
    let p = raw.bindMemory(to: Payload.self, capacity: 1)
    p.initialize(
        to: Payload(
            size: size, object: object, objectRelease: objectRelease, parent: parent,
            request: request, typeLength: UInt8(truncatingIfNeeded: type.length),
            subtypeLength: UInt8(truncatingIfNeeded: subtype?.length ?? 0)))
    if let headers {
        headers.retain()
        p.pointee.marks = Payload.headersMark
        p.headersSlot.initialize(to: headers)
    }
    return p
}

/// `makePayload` for copies that must be made (the event was accepted): waits for memory.
func makePayloadWaiting(
    type: CName, subtype: CName?, data: UnsafeRawPointer?, size: Int,
    object: UnsafeMutableRawPointer?, objectRelease: qtbus_release?,
    parent: UnsafeMutablePointer<Payload>?,
    request: UnsafeMutablePointer<Request>? = nil, headers: UnsafeMutablePointer<HeaderBlock>? = nil
) -> UnsafeMutablePointer<Payload> {
    func attempt() -> UnsafeMutablePointer<Payload>? {
        makePayload(
            type: type, subtype: subtype, data: data, size: size, object: object,
            objectRelease: objectRelease, parent: parent, request: request, headers: headers)
    }
    return attempt() ?? waitForMemory(attempt)
}

extension UnsafeMutablePointer where Pointee == Payload {
    @inline(__always)
    func retain() {
        _ = qtshim_atomic_fetch_add_u64(field(&pointee.refs), 1)
    }

    /// Drops a reference; the last one frees the payload and releases its object.
    func release() {
        guard droppedLastReference(self, field(&pointee.refs)) else { return }
        let object = pointee.object
        let objectRelease = pointee.objectRelease
        let parent = pointee.parent
        let request = pointee.request
        let headers = self.headers
        let pooled = qtshim_atomic_load_u32(field(&pointee.carrying)) == Payload.pooled
        deinitialize(count: 1)
        if pooled { returnPayloadBlock(UnsafeMutableRawPointer(self)) } else { free(self) }
        objectRelease?(object)
        parent?.release()
        request?.release()
        headers?.release()
    }
}

/// The CName of a payload's type (its length is known; the hash is recomputed only
/// on the cold paths that need it).
func payloadTypeName(_ p: UnsafeMutablePointer<Payload>) -> CName {
    CName(UnsafePointer(p.type))!
}

func payloadSubtypeName(_ p: UnsafeMutablePointer<Payload>) -> CName? {
    p.subtype.flatMap { CName(UnsafePointer($0)) }
}
