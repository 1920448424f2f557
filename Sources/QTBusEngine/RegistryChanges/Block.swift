// SPDX-License-Identifier: MIT
// Blocking a subscription without disposing it (qtbus_token_block / _unblock; qtbus.h
// states the rules).
//
// Where "blocked" lives: a count in the record (`Subscription.blocks`, registry lock)
// and, while it is above 0, `SubState.blockedBit` in the state byte every dispatch
// reads anyway.  The walk calls `direct` subscriptions and routes `routed` ones, and
// leaves any other state out (Dispatch.swift, `visit`): a blocked one is neither, so a
// program that never blocks pays no instruction for it.  The delivery array holds
// only direct subscriptions, made from the list when its change count moved: a block
// and the last unblock move the count of each list the subscription is in, after the
// state, so a dispatch that read the new count reads the new state, and one already
// calling by the array goes on by the list (with `visit`'s test) from its next entry.
//
// What a block does not touch: queued, parked and replayed deliveries made before it
// still run (they ask `isLive`, and a blocked subscription is live), and the counts,
// bags, sources and introspection see a live subscription.
import CQtbusShims
import CQtbusLibc

/// qtbus_token_block.
func blockToken(_ id: UInt64) -> Int32 {
    withRegistry { state, _ in
        guard let sub = state.pool.lookup(id), SubState.isLive(sub) else { return failStaleToken() }
        let blocks = sub.field(&sub.pointee.blocks)
        guard blocks.pointee < UInt16(QTBUS_MAX_BLOCKS) else {
            return fail(
                QTBUS_EINVAL, "the token is blocked %llu times already (QTBUS_MAX_BLOCKS)",
                value: UInt64(blocks.pointee))
        }
        if blocks.pointee == 0 {
            // A ONCE subscription a dispatch claimed since the lookup has fired.
            guard SubState.setBlocked(sub, true) else { return failStaleToken() }
            changed(sub)
        }
        blocks.pointee += 1
        return QTBUS_OK.rawValue
    }
}

/// qtbus_token_unblock.
func unblockToken(_ id: UInt64) -> Int32 {
    withRegistry { state, _ in
        guard let sub = state.pool.lookup(id), SubState.isLive(sub) else { return failStaleToken() }
        let blocks = sub.field(&sub.pointee.blocks)
        guard blocks.pointee > 0 else { return fail(QTBUS_EINVAL, "the token is not blocked") }
        if blocks.pointee == 1 {
            // A blocked ONCE subscription fires only by a replayed or parked event.
            guard SubState.setBlocked(sub, false) else { return failStaleToken() }
            changed(sub)
        }
        blocks.pointee -= 1
        return QTBUS_OK.rawValue
    }
}

/// Moves the change count of each list `sub` is in, after its state changed: a
/// delivery array made before is no longer current (see the top of this file).
private func changed(_ sub: UnsafeMutablePointer<Subscription>) {
    for i in 0..<Int(sub.pointee.nodeCount) { SubList.counted(Subscription.node(sub, i).pointee.list) }
}
