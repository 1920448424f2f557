// Generation-counted id handles (sokol_gfx's scheme).
//
// An id is (generation << 32) | slot.  Generations start at 1, so 0 is never issued,
// and a slot's generation moves on when its object is removed: a stale or repeated
// dispose finds a different generation and gets QTBUS_ESTALE instead of touching the
// object that reuses the slot.  Tables are only used under the registry lock.

struct HandleTable<Value> {
    private struct Slot {
        var generation: UInt32
        var value: Value?
    }

    private var slots: [Slot] = []
    private var free: [UInt32] = []

    /// Stores `value` and returns its id.
    mutating func insert(_ value: Value) -> UInt64 {
        let index: UInt32
        if let reused = free.popLast() {
            index = reused
            slots[Int(index)].value = value
        } else {
            index = UInt32(slots.count)
            slots.append(Slot(generation: 1, value: value))
        }
        return UInt64(slots[Int(index)].generation) << 32 | UInt64(index)
    }

    @inline(__always)
    private func locate(_ id: UInt64) -> Int? {
        let index = Int(id & 0xFFFF_FFFF)
        let generation = UInt32(truncatingIfNeeded: id >> 32)
        guard index < slots.count, generation != 0,
              slots[index].generation == generation, slots[index].value != nil else { return nil }
        return index
    }

    /// The live object of `id`, or nil for 0, a forged id or a stale generation.
    func lookup(_ id: UInt64) -> Value? {
        guard let index = locate(id) else { return nil }
        return slots[index].value
    }

    /// Removes and returns the object of `id`; its slot's generation moves on.
    @discardableResult
    mutating func remove(_ id: UInt64) -> Value? {
        guard let index = locate(id) else { return nil }
        let value = slots[index].value
        slots[index].value = nil
        // Skip generation 0 on wrap-around so no id is ever 0.
        let next = slots[index].generation &+ 1
        slots[index].generation = next == 0 ? 1 : next
        free.append(UInt32(index))
        return value
    }
}
