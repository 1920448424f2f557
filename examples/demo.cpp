// SPDX-License-Identifier: MIT
// demo.cpp -- the C++ API (qtbus.hpp): lambdas, RAII and exceptions over libqtbus.
//
//     c++ -std=c++17 examples/demo.cpp $(pkg-config --cflags --libs qtbus) -o demo-cpp && ./demo-cpp
//
// Steps: a lambda subscribed and disposed by its destructor, a subtype filter and a
// priority, a dispose bag, a serial queue, a request with replies, a command, and an
// exception from a handler routed to the program's handler.  The demo exits 0 only if
// every expected delivery happened, and no other.
#include <qtbus.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

static int failures;

static void check(bool ok, const char *what)
{
    std::printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

int main()
{
    qtbus::bus bus;

    std::puts("1. a lambda, disposed by its subscription's destructor");
    int logins = 0;
    {
        qtbus::subscription s = bus.subscribe("Login", [&logins](const qtbus::event &e) {
            std::printf("  Login: %.*s\n", static_cast<int>(e.data().size()), e.data().data());
            logins++;
        });
        check(bus.dispatch("Login", "alice") == 1, "one handler reached");
    }
    check(bus.dispatch("Login", "bob") == 0 && logins == 1, "none after the subscription's scope");

    std::puts("2. subtypes and priorities; a capture that only moves");
    std::string order;
    qtbus::options song42;
    song42.subtypes = {"42"};
    qtbus::options first;
    first.priority = 10;
    auto tag = std::make_unique<std::string>("specific ");
    auto a = bus.subscribe("Download", song42, [t = std::move(tag), &order] { order += *t; });
    auto b = bus.subscribe("Download", first, [&order] { order += "first "; });
    auto c = bus.subscribe("Download", [&order] { order += "whole "; });
    bus.dispatch("Download", "42", "");
    bus.dispatch("Download", "7", "");
    std::printf("  order: %s\n", order.c_str());
    check(order == "first specific whole first whole ", "priority first, then the subtype's, then the type's");

    std::puts("3. a dispose bag");
    int tapped = 0;
    {
        qtbus::bag bag;
        bag += bus.subscribe("Tap", [&tapped] { tapped++; });
        bag += bus.subscribe("Tap", [&tapped] { tapped++; });
        bus.dispatch("Tap");
    }
    bus.dispatch("Tap");
    check(tapped == 2, "both delivered once, both gone with the bag");

    std::puts("4. a serial queue");
    qtbus::queue worker("demo.worker");
    qtbus::options on_worker;
    on_worker.on = &worker;
    std::atomic<bool> other_thread{false};
    const auto main_id = std::this_thread::get_id();
    auto w = bus.subscribe("Work", on_worker,
                           [&](const qtbus::event &) { other_thread = std::this_thread::get_id() != main_id; });
    bus.dispatch("Work", "job");
    for (int i = 0; i < 5000 && !other_thread; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    check(other_thread, "delivered on the queue's thread");

    std::puts("5. a request: replies reach the sender");
    auto price = bus.subscribe("Price", [](const qtbus::event &e) { e.reply("9.99"); });
    std::string reply;
    bool complete = false;
    bus.request(
        "Price", "book", [&reply](const qtbus::event &r) { reply = std::string(r.data()); },
        [&complete] { complete = true; });
    check(reply == "9.99" && complete, "one reply, then the completion");

    std::puts("6. a command");
    std::string saved;
    auto values =
        bus.subscribe(QTBUS_COMMAND_VALUE_TYPE, [&saved](const qtbus::event &e) { saved = std::string(e.data()); });
    qtbus::command save = bus.command("save", [](qtbus::execution x, const qtbus::event *input) {
        x.send(input ? std::string("saved ") + std::string(input->data()) : std::string("saved nothing"));
        x.finish();
    });
    check(save.execute("Document", "notes.txt"), "the command ran (false: disabled or busy, nothing ran)");
    check(saved == "saved notes.txt", "the execution's value published");

    std::puts("7. an exception from a handler reaches the program's handler, not the library");
    std::string caught;
    qtbus::set_exception_handler([&caught](std::exception_ptr p) {
        try {
            std::rethrow_exception(p);
        } catch (const std::exception &e) {
            caught = e.what();
        }
    });
    auto thrower = bus.subscribe("Risky", [] { throw std::runtime_error("disk full"); });
    int after = 0;
    auto next = bus.subscribe("Risky", [&after] { after++; });
    bus.dispatch("Risky");
    check(caught == "disk full" && after == 1, "routed, and the next handler still ran");

    std::printf("%s\n", failures ? "demo-cpp: FAILED" : "demo-cpp: all steps passed");
    return failures ? 1 : 0;
}
