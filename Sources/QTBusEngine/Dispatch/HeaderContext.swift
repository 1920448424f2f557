// SPDX-License-Identifier: MIT
// The headers a dispatch carries (qtbus.h, "Event headers"): those its caller gives,
// then those it inherits from the event its thread is handling, and that thread's
// context (`ThreadRecord.handling`) set to them while its handlers run.  Every walk that
// calls handlers sets the context once, here for a dispatch and around the call for a
// delivery made later (QueuedDelivery.swift, StickyReplay.swift, PostedDispatch.swift,
// Commands.swift), never per handler call.
import CQtbusShims
import CQtbusLibc

/// Runs `body` (a dispatch) with the headers its event carries: those `desc` gives
/// (under QTBUS_EVENT_HEADERS), then those inherited from the event the thread is
/// handling (`record.handling`), and with the thread's context set to them while it
/// runs.  A dispatch with no headers made outside any handler with headers pays one
/// load and a test here.  `desc` nil: the call gives none (qtbus_dispatch_json).
@inline(__always)
func withHeaders(
    _ desc: UnsafePointer<qtbus_event_desc>?, flags: UInt32, _ record: UnsafeMutablePointer<ThreadRecord>,
    _ body: (UnsafeMutablePointer<HeaderBlock>?) -> Int32
) -> Int32 {
    if flags & headersFlag == 0 && record.pointee.handling == nil { return body(nil) }
    return withGivenOrInheritedHeaders(desc, flags: flags, record, body)
}

@inline(never)
func withGivenOrInheritedHeaders(
    _ desc: UnsafePointer<qtbus_event_desc>?, flags: UInt32, _ record: UnsafeMutablePointer<ThreadRecord>,
    _ body: (UnsafeMutablePointer<HeaderBlock>?) -> Int32
) -> Int32 {
    let made: (block: UnsafeMutablePointer<HeaderBlock>?, owned: Bool)
    do {
        made = try eventHeaders(desc, flags: flags, record)
    } catch {
        return error.value
    }
    let status = handlingEvent(record, made.block) { body(made.block) }
    if made.owned { made.block.unsafelyUnwrapped.release() }
    return status
}

/// The headers of a dispatch of `desc` made on `record`'s thread, as `makeHeaders`
/// returns them.
func eventHeaders(
    _ desc: UnsafePointer<qtbus_event_desc>?, flags: UInt32, _ record: UnsafeMutablePointer<ThreadRecord>
) throws(QTBusStatus) -> (block: UnsafeMutablePointer<HeaderBlock>?, owned: Bool) {
    let context = record.pointee.handling?.pointee.inheritable
    guard let desc, flags & headersFlag != 0 else { return (context, false) }
    switch makeHeaders(desc.pointee.headers, desc.pointee.header_count, inheriting: context) {
    case .made(let block, let owned): return (block, owned)
    case .failed(let status): throw QTBusStatus(status)
    }
}

/// Runs `body` with the headers of an event that outlives the call (a posted dispatch,
/// a command's input): inherited now, at the call; the thread's context is left alone,
/// since no handler runs here.  `body` copies them if it keeps them.
func withCallHeaders(
    _ desc: UnsafePointer<qtbus_event_desc>, flags: UInt32, _ body: (UnsafeMutablePointer<HeaderBlock>?) -> Int32
) -> Int32 {
    let made: (block: UnsafeMutablePointer<HeaderBlock>?, owned: Bool)
    do {
        made = try eventHeaders(desc, flags: flags, currentRecord())
    } catch {
        return error.value
    }
    let status = body(made.block)
    if made.owned { made.block.unsafelyUnwrapped.release() }
    return status
}
