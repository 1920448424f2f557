// Engine type ids for typed dispatch: each bus keeps the `qtbus_type_lookup` id of the
// Swift event types dispatched on it, so that a synchronous typed dispatch starts as C's
// `qtbus_dispatch_id` does, without measuring, hashing and finding the type's name.
//
// Per bus, a direct-mapped table of `_QTTypeIds.slotCount` words indexed by the type
// record's dense index (`_QTTypeRecord.index`): a word is (record index + 1) << 32 | the
// low half of the id (the type's index in the bus's table of resolved types; the high
// half is the bus's serial, the same for every id of the bus). A word is written once,
// by a CAS from 0, after the first dispatch of the type on the bus; a record whose slot
// another record holds dispatches by name, as every type did before. One load reads a
// word, and a word is whole by itself: no lock, no ordering needed (the engine checks
// every id it is given, and one it does not know falls back to the name).
import CQtbusShims
import QTBusEngine

@usableFromInline
struct _QTTypeIds {
    /// 1 KiB a bus; the first 128 event types of a process never share a slot.
    @usableFromInline static var slotCount: Int { 128 }

    @usableFromInline let slots: UnsafeMutablePointer<UInt64>
    /// The bus's serial, shifted into an id's high half.
    @usableFromInline let serialBits: UInt64

    init(bus: OpaquePointer) {
        slots = UnsafeMutablePointer<UInt64>.allocate(capacity: Self.slotCount)
        slots.initialize(repeating: 0, count: Self.slotCount)
        serialBits = UInt64(_qtEngineBusSerial(bus)) << 32
    }

    func deallocate() { slots.deallocate() }

    /// The engine id of `record`'s type on `bus` (this table's), looked up and kept on
    /// the first call; 0 when there is none to use (dispatch by name).
    @inlinable @inline(__always)
    func id(_ record: UnsafePointer<_QTTypeRecord>, bus: OpaquePointer) -> UInt64 {
        let index = record.pointee.index
        let slot = slots + Int(index) & (Self.slotCount - 1)
        let word = qtshim_atomic_load_u64(slot)
        if word >> 32 == UInt64(index) + 1 { return serialBits | word & 0xFFFF_FFFF }
        return word == 0 ? learn(record, slot, bus) : 0
    }

    /// First dispatch of the type on the bus: looks its id up and keeps it if the slot
    /// is still free. 0 if the lookup failed (a closed bus, no memory): the dispatch by
    /// name then reports the failure, and a later dispatch tries again.
    @usableFromInline
    func learn(_ record: UnsafePointer<_QTTypeRecord>, _ slot: UnsafeMutablePointer<UInt64>,
               _ bus: OpaquePointer) -> UInt64 {
        guard let cName = record.pointee.cName else { return 0 }
        var id = qtbus_type_id(id: 0)
        guard _qtbus_type_lookup(bus, cName, &id) == QTBUS_OK.rawValue,
              id.id & ~0xFFFF_FFFF == serialBits else { return 0 }
        _ = qtshim_atomic_cas_u64(slot, 0, (UInt64(record.pointee.index) + 1) << 32 | id.id & 0xFFFF_FFFF)
        return id.id
    }
}
