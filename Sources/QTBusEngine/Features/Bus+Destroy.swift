// SPDX-License-Identifier: MIT
// qtbus_bus_destroy: closes a bus and disposes all it holds (subscriptions, sticky
// events, commands, shared sources).
import CQtbusShims
import CQtbusLibc

/// qtbus_bus_destroy: closes the bus, disposes every subscription, drops its sticky
/// events, and frees it once no dispatch or post can still reach it.
func destroyBus(_ bus: UnsafeMutablePointer<Bus>) -> Int32 {
    let status: Int32 = withRegistry { state, after in
        if bus.pointee.isShared { return fail(QTBUS_EINVAL, "the shared bus (qtbus_shared()) is never destroyed") }
        let flags = qtshim_atomic_load_u32(bus.field(&bus.pointee.flags))
        guard flags & Bus.closedBit == 0 else { return fail(QTBUS_ECLOSED, "the bus is already being destroyed") }
        qtshim_atomic_store_u32(bus.field(&bus.pointee.flags), flags | Bus.closedBit)
        // Destroy cannot fail: the list of subscriptions waits for memory if it must.
        var found = Vector<UnsafeMutablePointer<Subscription>>()
        func collect(_ type: UnsafeMutablePointer<TypeEntry>) {
            forEachNode(type.pointee.whole) { found.append(Subscription.of($0)) }
            NameTable<SubtypeEntry>.forEach(type.pointee.subtypes) { entry in
                forEachNode(entry.pointee.list) { found.append(Subscription.of($0)) }
            }
            _ = type.pointee.sticky.removeAll(&after)
        }
        NameTable<TypeEntry>.forEach(bus.pointee.types, collect)
        NameTable<TypeEntry>.forEach(bus.pointee.patterns, collect)
        // A subscription with several subtypes was found once per list: the CAS
        // picks it once.  Fired ONCE subscriptions are unlinked by their dispatcher.
        found.forEach { sub in if SubState.claimForDispose(sub) { unlink(&state, sub, &after, .busDestroyed) } }
        found.free()
        // Its commands and sources go with it (a connected source is stopped).
        // Taken out first: disposing one removes it from the bus's list.
        var commands = bus.pointee.commands
        bus.pointee.commands = Vector()
        commands.forEach { id in
            if let c = state.commands.lookup(id) { disposeCommandLocked(&state, c, &after) }
        }
        commands.free()
        var sources = bus.pointee.sources
        bus.pointee.sources = Vector()
        sources.forEach { id in
            if let s = state.sources.lookup(id) { disposeSourceLocked(&state, s, &after) }
        }
        sources.free()
        return QTBUS_OK.rawValue
    }
    guard status == QTBUS_OK.rawValue else { return status }
    // Closed: no dispatcher of the bus starts waiting for a bounded queue's room now
    // (a delivery needs a live subscription), and those waiting give up.
    wakeBlocked(of: UnsafeMutableRawPointer(bus))
    // After the records of what the unlock above ran (disposes, releases).
    removeTrace(bus)
    // Last: the bus outlives everything above that names it.
    reclaimer.retireMemory(UnsafeMutableRawPointer(bus), dropBusStorePin)
    return QTBUS_OK.rawValue
}
