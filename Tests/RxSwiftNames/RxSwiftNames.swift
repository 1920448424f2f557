// SPDX-License-Identifier: MIT
// The public names of RxSwift that a program importing it beside QTEventBus has in
// scope (RxSwift itself is not in the package mirror): NameClashTests compile both
// imports in one file, as such a program would.
public protocol Disposable { func dispose() }

public final class DisposeBag {
    public private(set) var disposed = false
    public init() {}
    public func insert(_ disposable: Disposable) {}
    deinit {}
}

public final class PublishSubject<Element> {
    public init() {}
}
