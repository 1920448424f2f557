// SPDX-License-Identifier: MIT
// cxx_patterns: qtbus::pattern and options.pattern -- subscribing to families of events
// (QTBUS_SUB_PATTERN): what they receive beside a literal subscription, in delivery
// order, and an invalid pattern thrown as qtbus::error with qtbus_errmsg's reason.
#include "cxx_util.hpp"

#include <string>
#include <vector>

int main()
{
    qtbus::bus bus;
    std::vector<std::string> seen;
    qtbus::subscription all = bus.subscribe(
        qtbus::pattern(">"), [&](const qtbus::event &e) { seen.push_back("all:" + std::string(e.type())); });
    qtbus::subscription orders = bus.subscribe(
        qtbus::pattern("Order.*"), [&](const qtbus::event &e) { seen.push_back("orders:" + std::string(e.type())); });
    qtbus::options eu;
    eu.pattern = true;
    eu.subtypes = {"eu"};
    qtbus::subscription european =
        bus.subscribe("*.created", eu, [&](const qtbus::event &e) { seen.push_back("eu:" + std::string(e.type())); });
    qtbus::subscription literal = bus.subscribe(
        "Order.created", [&](const qtbus::event &e) { seen.push_back("literal:" + std::string(e.type())); });
    CHECK_EQ(bus.dispatch("Order.created", "eu", ""), 4);
    CHECK(seen == (std::vector<std::string>{"literal:Order.created", "all:Order.created", "orders:Order.created",
                                            "eu:Order.created"}));
    seen.clear();
    CHECK_EQ(bus.dispatch("Invoice.paid"), 1);
    CHECK(seen == (std::vector<std::string>{"all:Invoice.paid"}));

    bool threw = false;
    try {
        qtbus::subscription bad = bus.subscribe(qtbus::pattern("Order..x"), [] {});
    } catch (const qtbus::error &e) {
        threw = e.status() == QTBUS_EINVAL && std::string(e.what()).find("empty token") != std::string::npos;
    }
    CHECK(threw);
    std::puts("cxx_patterns: passed");
    return 0;
}
