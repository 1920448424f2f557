// SPDX-License-Identifier: MIT
// Generation-counted id handles (sokol_gfx's scheme).
//
// An id is (generation << 32) | slot.  Generations start at 1, so 0 is never issued,
// and a slot's generation moves on when its object is removed: a stale or repeated
// dispose finds a different generation and gets QTBUS_ESTALE instead of touching the
// object that reuses the slot.  Tables are only used under the registry lock.
//
// Slots live in one manually grown buffer, and free slots form an intrusive list
// through their `nextFree` field: insert and remove are a few instructions each, with
// no Swift array uniqueness or bounds checks (subscribe + dispose is a benchmark row).
import CQtbusLibc

struct HandleTable<Value> {
    private struct Slot {
        var generation: UInt32
        /// The next free slot + 1 while this one is free (0: end of the free list).
        var nextFree: UInt32
        var value: Value?
    }

    private var slots: UnsafeMutablePointer<Slot>? = nil
    private var capacity = 0
    private var used = 0
    /// The first free slot + 1 (0: none).
    private var freeHead: UInt32 = 0

    /// Stores `value` and returns its id; 0, with nothing stored, when out of memory.
    mutating func insert(_ value: Value) -> UInt64 {
        let index: Int
        if freeHead != 0 {
            index = Int(freeHead - 1)
            freeHead = slots![index].nextFree
            slots![index].value = value
        } else {
            if used == capacity && !grow() { return 0 }
            index = used
            used += 1
            (slots! + index).initialize(to: Slot(generation: 1, nextFree: 0, value: value))
        }
        return UInt64(slots![index].generation) << 32 | UInt64(index)
    }

    private mutating func grow() -> Bool {
        let newCapacity = max(64, capacity * 2)
        guard let grown = tryAllocate(Slot.self, capacity: newCapacity) else { return false }
        if let old = slots {
            grown.moveInitialize(from: old, count: used)
            free(old)
        }
        slots = grown
        capacity = newCapacity
        return true
    }

    @inline(__always)
    private func locate(_ id: UInt64) -> Int? {
        let index = Int(id & 0xFFFF_FFFF)
        let generation = UInt32(truncatingIfNeeded: id >> 32)
        guard index < used, generation != 0, let s = slots,
            s[index].generation == generation, s[index].value != nil
        else { return nil }
        return index
    }

    /// The live object of `id`, or nil for 0, a forged id or a stale generation.
    func lookup(_ id: UInt64) -> Value? {
        guard let index = locate(id) else { return nil }
        return slots![index].value
    }

    /// The object in slot `index`, whatever its generation (for back-references that
    /// are cleared before their object goes).
    func lookup(slot index: UInt32) -> Value? {
        guard Int(index) < used else { return nil }
        return slots![Int(index)].value
    }

    /// Removes and returns the object of `id`; its slot's generation moves on.
    @discardableResult
    mutating func remove(_ id: UInt64) -> Value? {
        guard let index = locate(id) else { return nil }
        let s = slots!
        let value = s[index].value
        s[index].value = nil
        // Skip generation 0 on wrap-around so no id is ever 0.
        let next = s[index].generation &+ 1
        s[index].generation = next == 0 ? 1 : next
        s[index].nextFree = freeHead
        freeHead = UInt32(index + 1)
        return value
    }
}
