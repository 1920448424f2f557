// A request's record: the sender's reply callback and completion, and the reference
// count that times the completion (Requests.swift).
import CQtbusShims
import Glibc

struct Request {
    var refs: UInt64 = 1
    let onReply: qtbus_reply_handler?
    let userdata: UnsafeMutableRawPointer?
    let release: qtbus_release?
}

/// nil when out of memory.
func makeRequest(onReply: qtbus_reply_handler?, userdata: UnsafeMutableRawPointer?,
                 release: qtbus_release?) -> UnsafeMutablePointer<Request>? {
    guard let r = tryAllocate(Request.self) else { return nil }
    r.initialize(to: Request(onReply: onReply, userdata: userdata, release: release))
    return r
}

extension UnsafeMutablePointer where Pointee == Request {
    @inline(__always)
    func retain() {
        _ = qtshim_atomic_fetch_add_u64(field(\.refs), 1)
    }

    /// Drops a reference; the last one completes the request.
    func release() {
        qtshim_tsan_release(self)
        guard qtshim_atomic_fetch_sub_u64(field(\.refs), 1) == 1 else { return }
        qtshim_tsan_acquire(self)
        let complete = pointee.release
        let userdata = pointee.userdata
        deinitialize(count: 1)
        free(self)
        complete?(userdata)
    }
}
