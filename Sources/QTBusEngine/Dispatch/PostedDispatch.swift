// SPDX-License-Identifier: MIT
// Whole dispatches posted to run later on a queue (qtbus_dispatch_on_bus_queue,
// qtbus_dispatch_on_main): the event copied now, dispatched on the queue's thread.
import CQtbusShims
import CQtbusLibc

/// Copies `event` and posts its dispatch to the queue `queue` picks; inside a memory
/// section, so a concurrent destroy cannot free the bus between the check and the pin.
func postCopy(
    _ bus: UnsafeMutablePointer<Bus>, _ event: Outgoing, flags: UInt32,
    _ queue: (UnsafeMutablePointer<Bus>) -> qtshim_dispatch_queue_t, isMain: Bool
) -> Int32 {
    if isClosed(bus) { return failClosed() }
    guard
        let payload = makePayload(
            type: event.type, subtype: event.subtype, data: event.data, size: event.size,
            object: event.object, objectRelease: event.objectRelease, parent: nil, headers: event.headers)
    else {
        return QTBUS_ENOMEM.rawValue
    }
    postDispatch(bus, payload, flags: flags, on: queue(bus), isMain: isMain)
    return QTBUS_OK.rawValue
}

private struct BusPost {
    let bus: UnsafeMutablePointer<Bus>
    let payload: UnsafeMutablePointer<Payload>
    let flags: UInt32
    let isMain: Bool
}

/// Posts a dispatch of `payload` (its reference is taken) to run later on `queue`.
func postDispatch(
    _ bus: UnsafeMutablePointer<Bus>, _ payload: UnsafeMutablePointer<Payload>,
    flags: UInt32, on queue: qtshim_dispatch_queue_t, isMain: Bool
) {
    beginQueuedWork(bus, main: isMain)
    // The event was copied and accepted: its post waits for memory if it must.
    let post = allocateWaiting(BusPost.self)
    post.initialize(to: BusPost(bus: bus, payload: payload, flags: flags, isMain: isMain))
    qtshim_tsan_release(post)
    qtshim_dq_async(queue, post) { raw in
        qtshim_tsan_acquire(raw)
        let post = raw!.assumingMemoryBound(to: BusPost.self)
        let (bus, payload, flags, isMain) = (
            post.pointee.bus, post.pointee.payload, post.pointee.flags, post.pointee.isMain
        )
        post.deinitialize(count: 1)
        free(post)
        withEpochRecord { record in
            var event = Outgoing(payload: payload)
            // Its handlers handle an event with these headers, inherited at the post.
            handlingEvent(record, event.headers) {
                if dispatchEvent(bus, &event, flags: flags) < 0 { payload.release() }
            }
        }
        countIfMain(isMain)
        endQueuedWork(bus)
    }
    if isMain { mainWorkPosted(bus) }
}
