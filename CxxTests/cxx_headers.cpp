// SPDX-License-Identifier: MIT
// cxx_headers: event headers from C++ (qtbus.hpp, "event headers").
//
// Users rely on: qtbus::headers built from a list and given to dispatch (with and
// without a subtype), request (with and without on_complete) and signal::emit;
// event::header finding a name exactly and nullopt otherwise; event::headers() walking
// them in qtbus_event_header_at's order with name and value; a dispatch made in a
// handler (a signal's slot included) inheriting traceparent; a reply carrying none;
// a header that breaks the rules throwing qtbus::error QTBUS_EINVAL with the C reason,
// and one holding a NUL byte refused before any C call.
#include "cxx_util.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

static const char *const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

using pairs = std::vector<std::pair<std::string, std::string>>;

static pairs all_of(const qtbus::event &e)
{
    pairs out;
    for (qtbus::header h : e.headers())
        out.emplace_back(std::string(h.name), std::string(h.value));
    return out;
}

static void dispatch_forms()
{
    qtbus::bus bus;
    pairs seen;
    std::optional<std::string> found, absent;
    qtbus::subscription s = bus.subscribe("Order", [&](const qtbus::event &e) {
        seen = all_of(e);
        auto v = e.header("traceparent");
        found = v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
        CHECK(!e.header("TRACEPARENT"));
        CHECK(!e.header(std::string_view("trace\0parent", 12)));
        absent = e.header("absent") ? std::optional<std::string>("?") : std::nullopt;
    });
    CHECK_EQ(bus.dispatch("Order", "o-1", qtbus::headers{{"traceparent", tp}, {"x-a", "1"}, {"x-a", "2"}}), 1);
    CHECK(seen == (pairs{{"traceparent", tp}, {"x-a", "2"}}));
    CHECK(found && *found == tp);
    CHECK(!absent);
    CHECK_EQ(bus.dispatch("Order", "web", "o-2", qtbus::headers{{"baggage", "k=v"}}), 1);
    CHECK(seen == (pairs{{"baggage", "k=v"}}));
    CHECK_EQ(bus.dispatch("Order", "o-3"), 1);
    CHECK(seen.empty());
    qtbus::headers none;
    CHECK(none.empty());
    CHECK_EQ(bus.dispatch("Order", "o-4", none), 1);
    CHECK(seen.empty());
}

static void inheritance_and_requests()
{
    qtbus::bus bus;
    pairs inner, asked, reply;
    int completed = 0;
    qtbus::subscription outer = bus.subscribe("Outer", [&](const qtbus::event &) { bus.dispatch("Inner"); });
    qtbus::subscription in = bus.subscribe("Inner", [&](const qtbus::event &e) { inner = all_of(e); });
    qtbus::subscription q = bus.subscribe("Ask", [&](const qtbus::event &e) {
        asked = all_of(e);
        e.reply("yes");
    });
    CHECK_EQ(bus.dispatch("Outer", "", qtbus::headers{{"traceparent", tp}, {"x-local", "no"}}), 1);
    CHECK(inner == (pairs{{"traceparent", tp}}));
    CHECK_EQ(bus.request("Ask", "?", qtbus::headers{{"tracestate", "a=b"}},
                         [&](const qtbus::event &e) { reply = all_of(e); }),
             1);
    CHECK(asked == (pairs{{"tracestate", "a=b"}}));
    CHECK(reply.empty());
    CHECK_EQ(bus.request(
                 "Ask", "?", qtbus::headers{{"x-b", "1"}}, [&](const qtbus::event &) {}, [&] { completed++; }),
             1);
    CHECK(asked == (pairs{{"x-b", "1"}}));
    CHECK_EQ(completed, 1);
}

static void signal_emit()
{
    qtbus::bus bus;
    qtbus::signal<void(int32_t)> sig(bus, "Tick");
    pairs inner, plain;
    int32_t got = 0;
    qtbus::subscription s = sig.connect([&](int32_t v) {
        got = v;
        bus.dispatch("FromSlot");
    });
    qtbus::subscription p = bus.subscribe("Tick", [&](const qtbus::event &e) { plain = all_of(e); });
    qtbus::subscription f = bus.subscribe("FromSlot", [&](const qtbus::event &e) { inner = all_of(e); });
    CHECK_EQ(sig.emit(qtbus::headers{{"traceparent", tp}, {"x-s", "1"}}, 7), 2);
    CHECK_EQ(got, 7);
    CHECK(plain == (pairs{{"traceparent", tp}, {"x-s", "1"}}));
    CHECK(inner == (pairs{{"traceparent", tp}}));
}

static void refusals()
{
    qtbus::bus bus;
    qtbus::subscription s = bus.subscribe("T", [] {});
    try {
        bus.dispatch("T", "", qtbus::headers{{"Bad Name", "v"}});
        CHECK(false);
    } catch (const qtbus::error &e) {
        CHECK_EQ(e.status(), QTBUS_EINVAL);
        CHECK(std::string(e.what()).find("qtbus_dispatch") != std::string::npos);
        CHECK(std::string(e.what()).find("token") != std::string::npos);
    }
    CHECK_THROWS(QTBUS_EINVAL, bus.dispatch("T", "", qtbus::headers{{"Qtbus-Origin", "v"}}));
    CHECK_THROWS(QTBUS_EINVAL, bus.dispatch("T", "", qtbus::headers{{"x", "line\nbreak"}}));
    CHECK_THROWS(QTBUS_EINVAL, bus.dispatch("T", "", qtbus::headers{{"x", std::string_view("a\0b", 3)}}));
    CHECK_THROWS(QTBUS_EINVAL, bus.request("T", "", qtbus::headers{{"", "v"}}, [] {}));
}

int main()
{
    dispatch_forms();
    inheritance_and_requests();
    signal_emit();
    refusals();
    std::printf("cxx_headers: headers given, read, inherited and refused from C++\n");
    return 0;
}
