// SPDX-License-Identifier: MIT
// The C boundary of qtbus.h's "Queues" section: one @_cdecl function per
// declaration, each in the shape CEntry.swift describes.
import CQtbusShims
import CQtbusLibc

@_cdecl("qtbus_queue_main")
@usableFromInline package func _qtbus_queue_main() -> OpaquePointer {
    OpaquePointer(mainQueue)
}

@_cdecl("qtbus_queue_create")
@usableFromInline package func _qtbus_queue_create(_ label: UnsafePointer<CChar>?) -> OpaquePointer? {
    entryPoint("qtbus_queue_create", making: { makeQueue(label: label).map { OpaquePointer($0) } })
}

@_cdecl("qtbus_queue_release")
@usableFromInline package func _qtbus_queue_release(_ queue: OpaquePointer?) {
    guard let queue else { return }
    let q = UnsafeMutablePointer<Queue>(queue)
    if q.pointee.isMain { return }
    if let ring = q.ring { releaseRing(ring) }
    q.release()
}

@_cdecl("qtbus_queue_set_limit")
@usableFromInline package func _qtbus_queue_set_limit(
    _ queue: OpaquePointer?, _ capacity: Int, _ overflow: UInt32,
    _ blockTimeoutMs: Int32
) -> Int32 {
    entryPoint(
        "qtbus_queue_set_limit",
        checks: (queue: try required(queue, "the queue is NULL"), rule: try overflowRule(overflow, capacity))
    ) { args in
        setLimit(
            UnsafeMutablePointer<Queue>(args.queue), capacity: capacity, rule: args.rule,
            blockTimeoutMs: blockTimeoutMs, runDelivery: runRingDelivery)
            ? QTBUS_OK.rawValue : fail(QTBUS_ENOMEM, "out of memory for the queue's slots")
    }
}

private func overflowRule(_ value: UInt32, _ capacity: Int) throws(QTBusStatus) -> Overflow {
    guard let rule = Overflow(rawValue: value) else {
        throw QTBusStatus(fail(QTBUS_EINVAL, "the overflow rule is not one of qtbus_overflow"))
    }
    // size_t arrives as Int: above Int.max it is negative.
    try ensure(capacity >= 0, else: fail(QTBUS_EINVAL, "the capacity is beyond what memory can hold"))
    try ensure(
        capacity > 0 || rule == .grow,
        else: fail(QTBUS_EINVAL, "a capacity of 0 bounds nothing: only QTBUS_OVERFLOW_GROW takes it"))
    return rule
}

@_cdecl("qtbus_queue_stats_get_sized")
@usableFromInline package func _qtbus_queue_stats_get_sized(
    _ queue: OpaquePointer?, _ out: UnsafeMutableRawPointer?,
    _ size: Int
) -> Int32 {
    // Named as the caller wrote it: the header's macro makes the call.
    entryPoint(
        "qtbus_queue_stats_get",
        checks: (
            queue: try required(queue, "the queue is NULL"), out: try required(out, "out is NULL"),
            size: try grownStructSize(size, first: 32)
        )
    ) { args in
        fillGrown(UnsafeMutablePointer<Queue>(args.queue).stats(), into: args.out, size: args.size)
        return QTBUS_OK.rawValue
    }
}

/// 0.2.0's entry point: its struct is the first 32 bytes of today's.
@_cdecl("qtbus_queue_stats_get")
@usableFromInline package func _qtbus_queue_stats_get(_ queue: OpaquePointer?, _ out: UnsafeMutableRawPointer?) -> Int32
{
    _qtbus_queue_stats_get_sized(queue, out, 32)
}

@_cdecl("qtbus_main_fd")
@usableFromInline package func _qtbus_main_fd() -> Int32 {
    _ = mainQueue
    return qtshim_main_queue_fd()
}

@_cdecl("qtbus_main_drain")
@usableFromInline package func _qtbus_main_drain() -> Int32 {
    entryPoint("qtbus_main_drain") { mainDrain() }
}

@_cdecl("qtbus_main_wait")
@usableFromInline package func _qtbus_main_wait(_ timeoutMs: Int32) -> Int32 {
    entryPoint("qtbus_main_wait") { mainWait(timeoutMs) }
}
