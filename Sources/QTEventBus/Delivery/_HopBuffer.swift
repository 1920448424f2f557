// SPDX-License-Identifier: MIT
// A buffered subscription's hops (QTEventSubscriberMaker.buffer(_:whenFull:)): at most
// `capacity` deliveries wait for the subscription's DispatchQueue, and QTOverflow says
// what happens to one more -- C's bounded queue rules, for one subscription: `offer`
// asks the engine's rules (QTBusEngine's Events/Overflow.swift, which BoundedQueue.swift
// asks too) and applies the answer to this buffer.
//
// A DispatchQueue is not an engine queue (its owner posts to it too), so the bound is
// kept here: the waiting deliveries sit in this buffer, and one queue item is posted
// per delivery accepted, each running the oldest waiting one when it comes up (a drop
// leaves an item with nothing to run, and the next acceptance posts none).  So the
// deliveries keep their place among the queue's other work, as plain hops do, and the
// number of items posted never exceeds the number waiting.
//
// A delivery waits from its hop until its item takes it; BLOCK waiters are served in
// the order they came (tickets), and a dispatch made on the queue itself (by any item
// of it, found through a queue-specific value) or, for the main queue, on the main
// thread is accepted beyond the capacity: waiting there would wait for itself.
import CQtbusShims
import Dispatch
import Glibc
import QTBusEngine
import Synchronization

@usableFromInline
final class _QTHopBuffer: @unchecked Sendable {
    // @unchecked: every var is touched only under `mutex`.
    struct Waiting {
        /// LATEST's key (the type is the subscription's, always the same).
        let subType: String?
        /// Calls the handler if the subscription is still live, then ends the work.
        let run: () -> Void
        /// Reports the drop (the rule's name), then ends the work.
        let drop: (StaticString) -> Void
    }

    let capacity: Int
    let rule: QTOverflow
    /// The engine's rule of `rule`, and BLOCK's timeout (nil: no limit).
    private let overflow: Overflow
    private let blockTimeout: Duration?
    private let queue: DispatchQueue
    let isMain: Bool
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let cond: UnsafeMutablePointer<pthread_cond_t>
    private var waiting: [Waiting?] = []
    private var head = 0
    /// Items posted that have not taken their delivery yet.
    private var posted = 0
    /// BLOCK's line: the next ticket given, the ticket served, tickets given up.
    private var nextTicket: UInt64 = 0
    private var serving: UInt64 = 0
    private var abandoned: Set<UInt64> = []

    init(capacity: Int, rule: QTOverflow, queue: DispatchQueue) {
        self.capacity = capacity
        self.rule = rule
        overflow = rule.engineRule
        if case .block(let timeout) = rule { blockTimeout = timeout } else { blockTimeout = nil }
        self.queue = queue
        isMain = queue.label == DispatchQueue.main.label
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        cond = .allocate(capacity: 1)
        cond.initialize(to: pthread_cond_t())
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(cond, &attributes)
        pthread_condattr_destroy(&attributes)
        waiting.reserveCapacity(capacity)
        if case .block = rule, queue.getSpecific(key: _qtQueueMark) == nil {
            queue.setSpecific(key: _qtQueueMark, value: _qtQueueMarks.wrappingAdd(1, ordering: .relaxed).newValue)
        }
    }

    deinit {
        pthread_cond_destroy(cond)
        cond.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private var count: Int { waiting.count - head }

    /// A delivery from the dispatching thread, by the rule.  `run` or `drop` is called
    /// exactly once (`drop` outside the lock, here or in a later offer).
    func offer(_ new: Waiting) {
        pthread_mutex_lock(mutex)
        var dropped: Waiting? = nil
        var why = rule.name
        defer {
            pthread_mutex_unlock(mutex)
            dropped?.drop(why)
        }
        if overflow.replacesSameKey, let i = waiting[head...].lastIndex(where: { $0?.subType == new.subType }) {
            dropped = waiting[i]
            waiting[i] = new
            return
        }
        if count < capacity && nextTicket == serving {
            append(new)
            return
        }
        switch overflow.whenFull(mayWait: !onOwnQueue()) {
        case .accept:
            append(new)
        case .dropOffered:
            dropped = new
        case .dropOldest:
            dropped = takeOldest()
            append(new)
        case .waitForRoom:
            let ticket = nextTicket
            nextTicket &+= 1
            if !waitForRoom(ticket, blockTimeout) {
                dropped = new
                why = rule.name
                return
            }
            serving &+= 1
            skipAbandoned()
            append(new)
            pthread_cond_broadcast(cond)
        }
    }

    /// Under the lock: waits until `ticket` is served and there is room, or the timeout
    /// (then gives the ticket up and returns false).
    private func waitForRoom(_ ticket: UInt64, _ timeout: Duration?) -> Bool {
        var deadline = timespec()
        if let timeout {
            clock_gettime(CLOCK_MONOTONIC, &deadline)
            let (seconds, attoseconds) = timeout.components
            let ns = Int(deadline.tv_nsec) + Int(attoseconds / 1_000_000_000)
            deadline.tv_sec += Int(seconds) + ns / 1_000_000_000
            deadline.tv_nsec = ns % 1_000_000_000
        }
        while !(serving == ticket && count < capacity) {
            if timeout == nil {
                pthread_cond_wait(cond, mutex)
            } else if pthread_cond_timedwait(cond, mutex, &deadline) == ETIMEDOUT
                && !(serving == ticket && count < capacity)
            {
                if serving == ticket {
                    serving &+= 1
                    skipAbandoned()
                } else {
                    abandoned.insert(ticket)
                }
                pthread_cond_broadcast(cond)
                return false
            }
        }
        return true
    }

    private func skipAbandoned() {
        while abandoned.remove(serving) != nil { serving &+= 1 }
    }

    /// Whether this thread is running an item of the subscription's queue, or is the
    /// main thread for the main queue.
    private func onOwnQueue() -> Bool {
        if isMain && _qtEngineOnMainThread() { return true }
        guard let mark = queue.getSpecific(key: _qtQueueMark) else { return false }
        return DispatchQueue.getSpecific(key: _qtQueueMark) == mark
    }

    private func append(_ new: Waiting) {
        if head > 64 && head * 2 > waiting.count {
            waiting.removeFirst(head)
            head = 0
        }
        waiting.append(new)
        guard posted < count else { return }
        posted += 1
        queue.async { [self] in runOldest() }
    }

    private func takeOldest() -> Waiting? {
        guard count > 0 else { return nil }
        let oldest = waiting[head]
        waiting[head] = nil
        head += 1
        if head == waiting.count {
            waiting.removeAll(keepingCapacity: true)
            head = 0
        }
        return oldest
    }

    /// An item on the queue: runs the oldest waiting delivery, if a drop left one.
    private func runOldest() {
        pthread_mutex_lock(mutex)
        posted -= 1
        let oldest = takeOldest()
        if oldest != nil && nextTicket != serving { pthread_cond_broadcast(cond) }
        pthread_mutex_unlock(mutex)
        oldest?.run()
    }
}

/// A queue-specific value that names a DispatchQueue (one per queue with a BLOCK
/// buffer), so that a dispatch can tell it runs on that queue.
private let _qtQueueMark = DispatchSpecificKey<UInt64>()
private let _qtQueueMarks = Atomic<UInt64>(0)
