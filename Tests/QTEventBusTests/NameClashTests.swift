// SPDX-License-Identifier: MIT
// QTEventBus's public names beside those of a package a program imports with it:
// RxSwift's DisposeBag is why QTEventBus's bag is QTDisposeBag.  This file compiling
// is most of the test (an ambiguous name would not).
import QTEventBus
import QTEventBusTestSupport
import RxSwiftNames
import Testing

extension QTBusTests {
    @Suite("Names beside RxSwift") struct NameClashTests {
        @Test func qtDisposeBagBesideRxSwiftsDisposeBag() {
            let bus = QTEventBus()
            let calls = Counter()
            let rxBag = RxSwiftNames.DisposeBag()  // theirs, in the same scope
            do {
                let bag = QTDisposeBag()
                bus.on(named: "Clash").disposed(by: bag).next { _ in calls.increment() }
                _ = bus.dispatch(named: "Clash")
                #expect(bag.count == 1)
            }
            _ = bus.dispatch(named: "Clash")
            #expect(calls.value == 1, "the bag's deinit disposed its token")
            #expect(!rxBag.disposed)
        }
    }
}
