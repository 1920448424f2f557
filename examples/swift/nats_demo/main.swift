// SPDX-License-Identifier: MIT
// examples/swift/nats_demo -- QTEventBusNATS: two buses joined through a NATS server, as
// two services in two processes would be (here in one, to be one command): the shop
// exports the family of types "Order.>", billing imports it and reads the orders from
// an AsyncStream; an invoice stays in the shop (no export matches it). Then the counts,
// the close, and a server that is not there. scripts/nats-demo.sh --swift runs it.
//
//   swift run qtbus-nats-demo nats://127.0.0.1:4222
import Glibc
import QTEventBus
import QTEventBusNATS

func demo(url: String) async throws(QTBusError) {
    let shop = QTEventBus()
    let billing = QTEventBus()
    let shopBridge = try await QTNATSBridge(bus: shop, url: url)
    let billingBridge = try await QTNATSBridge(bus: billing, url: url)
    shopBridge.export(matching: "Order.>")  // Order.created, Order.paid, ...
    try await billingBridge.import(matching: "Order.>")  // returns once the server has it

    // Imported events are dispatched on billing's bus like any other.
    let orders = billing.on(matching: "Order.>").events()
    shop.dispatch(named: "Order.created", bytes: Array(#"{"id": 1, "item": "tea"}"#.utf8))
    shop.dispatch(named: "Invoice.sent", bytes: Array(#"{"id": 1}"#.utf8))
    shop.dispatch(named: "Order.paid", bytes: Array(#"{"id": 1}"#.utf8))
    var received = 0
    for await order in orders {
        print("billing: \(order.type) \(order.text)")
        received += 1
        if received == 2 { break }
    }
    print("shop: published \(shopBridge.stats.published) orders; billing: received \(billingBridge.stats.received)")

    try await shopBridge.close()  // flushes: what was published has reached the server
    try await billingBridge.close()  // dispatches what it had received, then disconnects

    do {
        _ = try await QTNATSBridge(bus: shop, url: "nats://127.0.0.1:1")
    } catch QTBusError.io {
        print("nats://127.0.0.1:1: no server there (QTBusError.io)")
    }
}

do {
    try await demo(url: CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "nats://127.0.0.1:4222")
} catch {
    print("nats_demo: \(error)")
    exit(1)
}
