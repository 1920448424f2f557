// SPDX-License-Identifier: MIT
// A request's record: the sender's reply callback and completion, and the reference
// count that times the completion (Requests.swift); and a deferred reply, which holds
// one of those references until it is finished.
import CQtbusShims
import CQtbusLibc

struct Request {
    var refs: UInt64 = 1
    let onReply: qtbus_reply_handler?
    let userdata: UnsafeMutableRawPointer?
    let release: qtbus_release?
}

/// nil when out of memory.
func makeRequest(
    onReply: qtbus_reply_handler?, userdata: UnsafeMutableRawPointer?,
    release: qtbus_release?
) -> UnsafeMutablePointer<Request>? {
    guard let r = tryAllocate(Request.self) else { return nil }
    r.initialize(to: Request(onReply: onReply, userdata: userdata, release: release))
    return r
}

extension UnsafeMutablePointer where Pointee == Request {
    @inline(__always)
    func retain() {
        _ = qtshim_atomic_fetch_add_u64(field(&pointee.refs), 1)
    }

    /// Drops a reference; the last one completes the request.
    func release() {
        guard droppedLastReference(self, field(&pointee.refs)) else { return }
        let complete = pointee.release
        let userdata = pointee.userdata
        deinitialize(count: 1)
        free(self)
        complete?(userdata)
    }
}

/// A handler's promise to answer later (qtbus_event_defer): one reference to its
/// request, and the request's names for the replies it sends.  Its own count: the
/// handle table's reference, and one per reply under way on another thread, so
/// finishing while a reply runs frees it only after that reply.
struct DeferredReply {
    var refs: UInt64 = 1
    let request: UnsafeMutablePointer<Request>
    /// Both copied, NUL-terminated, in the same allocation after this struct.
    let type: UnsafePointer<CChar>
    let subtype: UnsafePointer<CChar>?
}

/// nil when out of memory; takes a reference to `request` on success.
func makeDeferredReply(
    _ request: UnsafeMutablePointer<Request>, type: UnsafePointer<CChar>,
    subtype: UnsafePointer<CChar>?
) -> UnsafeMutablePointer<DeferredReply>? {
    let typeSize = strlen(type) + 1
    let subtypeSize = subtype.map { strlen($0) + 1 } ?? 0
    guard let raw = malloc(MemoryLayout<DeferredReply>.stride + typeSize + subtypeSize) else { return nil }
    let names = (raw + MemoryLayout<DeferredReply>.stride).assumingMemoryBound(to: CChar.self)
    memcpy(names, type, typeSize)
    if let subtype { memcpy(names + typeSize, subtype, subtypeSize) }
    let d = raw.assumingMemoryBound(to: DeferredReply.self)
    request.retain()
    d.initialize(
        to: DeferredReply(
            request: request, type: UnsafePointer(names),
            subtype: subtype == nil ? nil : UnsafePointer(names + typeSize)))
    return d
}

extension UnsafeMutablePointer where Pointee == DeferredReply {
    @inline(__always)
    func retain() {
        _ = qtshim_atomic_fetch_add_u64(field(&pointee.refs), 1)
    }

    /// Drops a reference; the last one drops the request's (which may complete it).
    func release() {
        guard droppedLastReference(self, field(&pointee.refs)) else { return }
        let request = pointee.request
        deinitialize(count: 1)
        free(self)
        request.release()
    }
}
