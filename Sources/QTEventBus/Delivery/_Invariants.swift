// SPDX-License-Identifier: MIT
// The delivery machinery: what the files of this folder rely on, in one place.
//
// This folder is how a Swift value reaches the engine and comes back out to a closure:
// _Send.swift (a dispatch, to the engine), _EventCell.swift (the value's cell),
// _TypeRecord.swift and _NameInfo.swift (what is kept per type and per name),
// _Subscription.swift (the subscription object, which is the token, and the two C
// functions the engine calls), _FreeWith.swift (the engine's questions about a freeWith
// object), _Refusals.swift (traps and throws), and two helpers, _Bytes.swift and
// _Locked.swift. The public API, one folder up, calls into it and holds none of these
// rules. Layouts 1 to 3 are checked against the compiler's by
// `_qtDeliveryLayoutProblems()` below, and layout 4 on real subscriptions, by the tests
// (DeliveryLayoutTests): a compiler or an edit that moves one fails there.
//
// Layouts
//  1. The cell (_EventCell.swift). A typed event's value travels as the engine event's
//     object, in raw memory: word 0 is the key of its Swift type (the metatype's
//     address, `_qtTypeKey`), word 1 is 1 when the value must be destroyed (not POD),
//     else 0; the value starts at `_qtCellValueOffset(E)`, max(16, E's alignment). The
//     engine never reads a cell: it copies and frees one only through
//     `_qtEventCellCopy` and `_qtEventCellRelease`, which find the value's type in word
//     0. A delivery reads a value only through `_qtCellValue(_:in:)`, and only when word
//     0 is its own type's key (two Swift types may share an engine name).
//  2. The subscription object (_Subscription.swift). Swift lays out a class as a struct
//     after a two-word header, the stored properties of the root class first:
//     QTEventToken's `state` (8 bytes) at 16, `_QTSubscription.deliver` at 24,
//     `_QTHandlerSubscription.handler` at 40 (`handlerOffset`); a plain subscription is
//     this object alone, 56 bytes (a 64-byte malloc chunk). `dropHandler` writes the
//     context word of `handler` in place (rule 7), after checking that the two words at
//     `handlerOffset` are the handler's; if they are not, it writes nothing and the
//     closure stays until the token goes.
//  3. A closure is two words, its function then its context (a native object, or nil):
//     `_QTDeliverFunction` and `_QTHandler<V>`, whatever V, are exactly that.
//  4. The token word (`QTEventToken.state`): the engine token's id, generation << 32 |
//     pool index, the index below 2^31, so the engine never sets bit 31
//     (`_qtEngineTokenSpareBit`); the Swift API sets it when the subscription is
//     cancelled. 0: not made yet. One atomic word, so that `dispose()` and the end of
//     subscribe agree on which of them disposes the engine token (QTEventToken.swift).
//
// Ownership
//  5. A cell. A synchronous dispatch's cell is on the dispatching frame's stack: the
//     engine borrows it for the call and asks `_qtEventCellCopy`, at most once, for a
//     heap copy when a delivery outlives the call (an engine queue, a sticky keep, a
//     replay backlog); it owns that copy and frees it with `_qtEventCellRelease` after
//     its last delivery. The frame destroys its value when the call has returned. A
//     posted dispatch's or a request's cell is on the heap, the engine's once the call
//     succeeds; the engine takes nothing from a call it refuses, and the caller frees
//     the cell (`_qtSend`, `_qtRefuseUnsent`, `_requestTyped`). A handler borrows the
//     value during its call; a hop to a queue copies it into its closure.
//  6. A subscription. Its object (`_QTSubscription`) is its token. The engine holds one
//     reference, passed retained as the userdata, until it calls the release hook
//     (`_qtSubscriptionRelease`), exactly once, after its last call of `_qtDeliver`
//     (lifetime rule 1 of qtbus.h); during a call it keeps the userdata alive, so
//     `_qtDeliver` borrows the object without retaining it. A hop holds the object until
//     it has run.
//  7. When a handler may be dropped: only by the release hook (`released()`, then
//     `dropHandler`). Every call of `handler` reads it during a delivery, which the
//     release follows; a hop carries its own copy, so that a ONCE subscription, released
//     as it fires, still runs its hop. After the drop `handler` keeps its function with a
//     nil context and is never called again.
//
// The engine seam (QTBusEngine's Boundary/SwiftAPISupport.swift)
//  8. One type lookup per dispatch, the engine's. Each bus keeps the handle of every
//     Swift type dispatched on it (its TypeEntry, valid as long as the bus) with the
//     type's `_QTTypeRecord`, how its cells are copied and released, and whether its
//     events carry data (a `QTBytesEvent`). `_qtEngineDispatchSwift` finds them by the
//     type's key and dispatches, in the one engine call of a synchronous dispatch; for a
//     bytes event it asks for the bytes inside its section (`_qtWithEventBytes`, whose
//     `eventBytes` delays reclamation as a handler does, nothing more). It declines the
//     type's first dispatch on the bus with nothing done: the type is then registered
//     (`_qtLearnType`, which runs `eventName`), outside any section, and dispatched. A posted dispatch makes the same
//     lookup for the record (`_qtEngineSwiftTypeInfo`). Type records are never freed:
//     the engine keeps pointers to them.
import Synchronization
import QTBusEngine

/// Layouts 1 to 3 above, checked against what the compiler made: empty when they all
/// hold, one line per difference otherwise. The tests run it (as swift-collections'
/// `_checkInvariants()` are run); nothing calls it in a program.
func _qtDeliveryLayoutProblems() -> [String] {
    var problems: [String] = []
    func check(_ holds: Bool, _ problem: @autoclosure () -> String) {
        if !holds { problems.append(problem()) }
    }
    let word = MemoryLayout<UInt>.size

    // 3. Closures.
    check(
        MemoryLayout<_QTDeliverFunction>.size == 2 * word,
        "_QTDeliverFunction is \(MemoryLayout<_QTDeliverFunction>.size) bytes, not two words")
    check(
        MemoryLayout<_QTHandler<UInt8>>.size == 2 * word && MemoryLayout<_QTHandler<QTNamedEvent>>.size == 2 * word,
        "_QTHandler is not two words")

    // 2. The subscription object: each field where the offsets say, holding its value.
    final class Captured: Sendable {}
    let captured = Captured()
    let subscription = _QTNamedSubscription(handler: { _ in _ = captured }, extras: nil)
    let id: UInt64 = 5 << 32 | 7
    subscription.made(id)
    let base = UnsafeRawPointer(Unmanaged.passUnretained(subscription).toOpaque())
    check(MemoryLayout<Atomic<UInt64>>.size == 8, "QTEventToken.state is not 8 bytes")
    check(base.load(fromByteOffset: 2 * word, as: UInt64.self) == id, "QTEventToken.state is not at \(2 * word)")
    // `deliver` is between them (a bare closure cannot be read without a new context:
    // `_QTHandler` is a struct so that `handler` can).
    check(
        _QTNamedSubscription.handlerOffset == 5 * word,
        "handlerOffset is \(_QTNamedSubscription.handlerOffset), not \(5 * word)")
    let handler = unsafeBitCast(subscription.handler, to: (UInt, UInt).self)
    check(
        handler.1 != 0 && subscription.handlerField.map(UnsafeRawPointer.init) == base + 5 * word,
        "_QTHandlerSubscription.handler is not at handlerOffset")
    withExtendedLifetime(subscription) {}

    // 1. Cells: the header and the value where `_qtCellValue` reads it, for a value to
    // destroy and for plain bytes, and in a copy.
    func checkCell<E: Equatable>(_ value: E, destroy: Bool) {
        let offset = _qtCellValueOffset(E.self)
        check(
            offset >= 2 * word && offset % MemoryLayout<E>.alignment == 0, "the cell offset of \(E.self) is \(offset)")
        let cell = _qtMakeCell(value)
        let copy = _qtEventCellCopy(cell)!
        for c in [cell, copy] {
            check(c.load(as: UInt.self) == _qtTypeKey(E.self), "a cell of \(E.self) does not start with its key")
            check(
                c.load(fromByteOffset: word, as: UInt.self) == (destroy ? 1 : 0),
                "a cell of \(E.self) does not say whether to destroy its value")
            check((c + offset).assumingMemoryBound(to: E.self).pointee == value, "a cell of \(E.self) lost its value")
        }
        _qtEventCellRelease(copy)
        _qtEventCellRelease(cell)
    }
    checkCell(String(repeating: "cell-", count: 8), destroy: true)
    checkCell(UInt8(7), destroy: false)
    checkCell(SIMD4<Float>(1, 2, 3, 4), destroy: false)
    return problems
}
