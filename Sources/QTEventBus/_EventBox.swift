// The Swift value of a typed event, carried as the engine event's `object`.
//
// A typed dispatch allocates one box (the only allocation of a plain dispatch) and
// hands it to the engine with `_qtEventBoxRelease`, which the engine calls exactly once
// after the last delivery (queued and sticky ones included), or at once if nobody
// receives the event. Subscribers borrow the box during their call and copy the value
// out only when they hop to a queue.
//
// `key` identifies the Swift type, because two types may share an engine name (an
// overridden `eventName`): a subscriber of `E` reads the value only from a box whose key
// is `E`'s.
import CQtbusShims

@usableFromInline
class _QTAnyEventBox: @unchecked Sendable {
    // @unchecked: immutable after init.
    @usableFromInline let key: ObjectIdentifier

    @inlinable
    init(key: ObjectIdentifier) { self.key = key }
}

@usableFromInline
final class _QTEventBox<E: QTEvent>: _QTAnyEventBox, @unchecked Sendable {
    // @unchecked: immutable after init, and E is Sendable.
    @usableFromInline let value: E

    @inlinable
    init(_ value: E) {
        self.value = value
        super.init(key: ObjectIdentifier(E.self))
    }
}

/// The engine's object_release for event boxes.
let _qtEventBoxRelease: qtbus_release = { raw in
    Unmanaged<_QTAnyEventBox>.fromOpaque(raw.unsafelyUnwrapped).release()
}
