// SPDX-License-Identifier: MIT
/*
 * examples/nats_demo.cpp -- qtbus_nats.hpp: two buses joined through a NATS server, as
 * two services in two processes would be (here in one, to be one command): the shop
 * exports the family of types "Order.>", billing imports it and prints the orders; an
 * invoice stays in the shop (no export matches it).  Then the counts, the close, and a
 * server that is not there.  scripts/nats-demo.sh runs it.
 *
 *   c++ -std=c++17 examples/nats_demo.cpp $(pkg-config --cflags --libs qtbus-nats) -o nats_demo
 *   ./nats_demo nats://127.0.0.1:4222
 */
#include <qtbus_nats.hpp>

#include <condition_variable>
#include <iostream>
#include <mutex>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    const char *url = argc > 1 ? argv[1] : "nats://127.0.0.1:4222";
    try {
        qtbus::bus shop, billing; // first: a bridge is closed before its bus goes

        // Imported events are dispatched on billing's bus, on its bridge's thread.
        std::mutex lock;
        std::condition_variable arrived;
        std::vector<std::string> orders;
        qtbus::subscription printer = billing.subscribe(qtbus::pattern("Order.>"), [&](const qtbus::event &e) {
            std::lock_guard<std::mutex> guard(lock);
            orders.push_back(std::string(e.type()) + " " + std::string(e.data()));
            arrived.notify_one();
        });

        qtbus::nats::bridge shop_bridge(shop, url), billing_bridge(billing, url);
        shop_bridge.export_events("Order.>");                    // Order.created, Order.paid, ...
        billing_bridge.import_events(qtbus::pattern("Order.>")); // returns once the server has it

        shop.dispatch("Order.created", R"({"id": 1, "item": "tea"})");
        shop.dispatch("Invoice.sent", R"({"id": 1})");
        shop.dispatch("Order.paid", R"({"id": 1})");
        {
            std::unique_lock<std::mutex> guard(lock);
            arrived.wait(guard, [&] { return orders.size() == 2; });
            for (const std::string &o : orders)
                std::cout << "billing: " << o << "\n";
        }
        std::cout << "shop: published " << shop_bridge.stats().published << " orders; billing: received "
                  << billing_bridge.stats().received << "\n";

        // close() flushes what was published and dispatches what was received; the
        // destructor would do the same, without saying whether anything was lost.
        if (!shop_bridge.close() || !billing_bridge.close()) std::cerr << qtbus_errmsg() << "\n";

        try {
            qtbus::nats::bridge nowhere(shop, "nats://127.0.0.1:1");
        } catch (const qtbus::error &e) {
            if (e.status() != QTBUS_EIO) throw;
            std::cout << "nats://127.0.0.1:1: no server there (QTBUS_EIO)\n";
        }
    } catch (const qtbus::error &e) {
        std::cerr << "nats_demo: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
