// SPDX-License-Identifier: MIT
// A collection of tokens disposed together: the Swift stand-in for the object whose
// lifetime QTEventBus's freeWith used, and for the C API's qtbus_bag.

/// Collects ``QTEventToken``s and disposes them all at once: when ``dispose()`` is
/// called, or when the bag is deallocated.
///
/// ```swift
/// final class Screen {
///     let bag = QTDisposeBag()
///     init(bus: QTEventBus) {
///         bus.on(LoginEvent.self).disposed(by: bag).next { print($0.userId) }
///     }
/// }   // the subscription ends with the screen
/// ```
///
/// The bag is a Swift object, not an engine bag: disposing it disposes each token
/// (which also drops their queued `atQueue` hops). Tokens that ended on their own
/// (disposed, fired once) are pruned as the bag grows. Thread-safe.
public final class QTDisposeBag: Sendable {
    private let tokens = _QTLocked<[QTEventToken]>([])

    /// An empty bag.
    public init() {}

    /// Adds `token`; it is disposed with the bag.
    public func insert(_ token: QTEventToken) {
        tokens.withLock { tokens in
            // Amortized pruning, so a bag fed with short-lived tokens stays small.
            if tokens.count >= 16 && tokens.count & (tokens.count - 1) == 0 {
                tokens.removeAll { !$0.isActive && $0.id != 0 }
            }
            tokens.append(token)
        }
    }

    /// Disposes every token added so far. The bag stays usable: tokens added later are
    /// disposed by the next `dispose()` or by `deinit`.
    public func dispose() {
        let taken = tokens.withLock { tokens -> [QTEventToken] in
            let taken = tokens
            tokens = []
            return taken
        }
        // Outside the lock: disposing can run release hooks, which run user deinits.
        for token in taken { token.dispose() }
    }

    /// The number of tokens held (some may have ended on their own).
    public var count: Int { tokens.withLock { $0.count } }

    deinit { dispose() }
}

/// The name of ``QTDisposeBag`` before 0.2: it clashed with RxSwift's `DisposeBag` in
/// code importing both.  Kept for one minor version.
@available(
    *, deprecated, renamed: "QTDisposeBag",
    message: "DisposeBag clashes with RxSwift's DisposeBag; use QTDisposeBag"
)
public typealias DisposeBag = QTDisposeBag
