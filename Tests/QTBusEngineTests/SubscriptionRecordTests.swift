// SPDX-License-Identifier: MIT
// The subscription record (Subscription.swift): its size, and the states a block folds
// into the state byte the dispatch walk reads anyway (Block.swift).
import Testing
@testable import QTBusEngine

extension Engine {
    @Suite("Subscription record")
    struct SubscriptionRecordTests {

        @Test("the record stays 80 bytes: the block count lives in its padding")
        func recordSize() {
            #expect(MemoryLayout<Subscription>.stride == 80)
            #expect(
                MemoryLayout<Subscription>.offset(of: \Subscription.blocks)! < MemoryLayout<Subscription>.offset(
                    of: \Subscription.handler)!)
        }

        @Test("blocked states are live, neither direct nor routed, and keep which one they were")
        func blockedStates() {
            for state in [SubState.direct, SubState.routed] {
                let blocked = state | SubState.blockedBit
                #expect(SubState.isLive(blocked))
                #expect(blocked != SubState.direct && blocked != SubState.routed)
                #expect(blocked & ~SubState.blockedBit == state)
            }
            #expect(!SubState.isLive(SubState.fired))
            #expect(!SubState.isLive(SubState.disposed))
        }
    }
}
