// SPDX-License-Identifier: MIT
// cxx_nats: qtbus_nats.hpp against a real nats-server (cxx_nats_server.h) -- two buses,
// each with its own qtbus::nats::bridge, as two processes would be:
//   - export_events / import_events of a type, of a pattern (a string and qtbus::pattern)
//     and of one subtype: what crosses, with its subtype and bytes, and what does not;
//   - unexport_events / unimport_events: true once, then false (nothing left to end);
//   - stats() and is_connected(), across a server restart;
//   - failures thrown as qtbus::error with qtbus_errmsg()'s words: a url with no server
//     (naming it), a server that refuses the password (QTBUS_EACCES), a bad name, a NUL byte, a negative timeout, an empty bridge; the url's
//     password never shown;
//   - options (prefix, jetstream: a sticky event kept by the server reaches a later
//     import; a negative request_timeout refused);
//   - connect_with (nats.c's natsOptions) and attach (a natsConnection the bridge never
//     closes), RAII: destructor, move, close(), release();
//   - close(timeout): within the time with the server gone (false), true when nothing
//     was left, a negative timeout taken as 0.
#include "cxx_util.hpp"
#include "cxx_nats_server.h"

#include <qtbus_nats.hpp>

#include <nats/nats.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

namespace {

// What a bus received: "type/subtype:data" lines, from the bridge's thread.
struct inbox {
    std::mutex lock;
    std::vector<std::string> lines;

    auto handler()
    {
        return [this](const qtbus::event &e) {
            std::string line(e.type());
            if (e.subtype()) line += "/" + std::string(*e.subtype());
            line += ":" + std::string(e.data());
            std::lock_guard<std::mutex> guard(lock);
            lines.push_back(line);
        };
    }
    std::vector<std::string> seen()
    {
        std::lock_guard<std::mutex> guard(lock);
        return lines;
    }
    size_t size() { return seen().size(); }
    void wait_for(size_t n)
    {
        wait_until([&] { return size() >= n; });
    }
    // Checks that the lines are `want`, in any order (events of different imports may
    // be dispatched in another order than they were published: DELIVERY in
    // qtbus_nats.h), printing both otherwise.
    bool is(std::vector<std::string> want)
    {
        std::vector<std::string> got = seen();
        std::sort(got.begin(), got.end());
        std::sort(want.begin(), want.end());
        if (got == want) return true;
        std::fprintf(stderr, "cxx_nats: received:\n");
        for (const std::string &l : got)
            std::fprintf(stderr, "  %s\n", l.c_str());
        std::fprintf(stderr, "wanted:\n");
        for (const std::string &l : want)
            std::fprintf(stderr, "  %s\n", l.c_str());
        return false;
    }
    // Whether `first` was received before `then`.
    bool before(const std::string &first, const std::string &then)
    {
        std::vector<std::string> got = seen();
        auto a = std::find(got.begin(), got.end(), first), b = std::find(got.begin(), got.end(), then);
        return a != got.end() && b != got.end() && a < b;
    }
    void clear()
    {
        std::lock_guard<std::mutex> guard(lock);
        lines.clear();
    }
};

// The qtbus::error `f` throws (the test fails when it throws nothing).
template <class F>
qtbus::error thrown(F f)
{
    try {
        f();
    } catch (const qtbus::error &e) {
        return e;
    }
    std::fprintf(stderr, "cxx_nats: no qtbus::error thrown\n");
    std::_Exit(1);
}

bool contains(const std::string &text, const std::string &part) { return text.find(part) != std::string::npos; }

// Dispatches a marker event and waits for `to` to have `count` lines: the marker and
// what was published before it.
void sync(qtbus::bus_ref from, inbox &to, const char *marker, size_t count)
{
    from.dispatch(marker, "sync");
    to.wait_for(count);
}

void crossing(const char *url)
{
    qtbus::bus orders, billing; // before the bridges: destroyed after them
    inbox got;
    qtbus::subscription all = billing.subscribe(qtbus::pattern(">"), got.handler());

    qtbus::nats::bridge out(orders, url), in(billing, url);
    CHECK(out && in);
    CHECK(out.is_connected());

    out.export_events("Order.>");
    out.export_events("Price");
    out.export_events("Sync");
    in.import_events(qtbus::pattern("Order.>"));
    in.import_events("Price", "eur");
    in.import_events("Sync");

    CHECK_EQ(orders.dispatch("Order.created", "eu", "{\"id\":1}"), 1); // the export's subscription
    orders.dispatch("Order.paid", "{\"id\":1}");
    orders.dispatch("Invoice.sent", "{}");   // not exported
    orders.dispatch("Price", "usd", "1.10"); // not this subtype
    orders.dispatch("Price", "eur", "1.00");
    sync(orders, got, "Sync", 4);
    CHECK(got.is({"Order.created/eu:{\"id\":1}", "Order.paid:{\"id\":1}", "Price/eur:1.00", "Sync:sync"}));
    CHECK(got.before("Order.created/eu:{\"id\":1}", "Order.paid:{\"id\":1}")); // one import: in order

    qtbus_nats_stats o = out.stats(), i = in.stats();
    CHECK_EQ(o.published, 5u); // two orders, two prices (the import filters), the marker
    CHECK_EQ(i.received, 4u);
    CHECK_EQ(o.dropped + i.dropped, 0u);

    // Undoing: true once, then nothing is left to end.
    CHECK(in.unimport_events("Price", "eur"));
    CHECK(!in.unimport_events("Price", "eur"));
    CHECK(in.unimport_events(qtbus::pattern("Order.>")));
    CHECK(!in.unimport_events("Order.>"));
    CHECK(out.unexport_events("Price"));
    CHECK(!out.unexport_events("Price"));
    CHECK(!out.unexport_events("Never"));
    got.clear();
    orders.dispatch("Order.created", "{\"id\":2}"); // published, no longer imported
    orders.dispatch("Price", "eur", "2.00");        // no longer published
    sync(orders, got, "Sync", 1);
    CHECK(got.is({"Sync:sync"}));
    CHECK_EQ(in.stats().received, 5u);

    // close(): true, then empty; a second close and the destructor do nothing.
    CHECK(out.close());
    CHECK(!out);
    CHECK(out.c_bridge() == nullptr);
    CHECK(out.close());
    qtbus::error e = thrown([&] { out.export_events("Order"); });
    CHECK_EQ(e.status(), QTBUS_EINVAL);
    CHECK(contains(e.what(), "qtbus_nats_export: the qtbus::nats::bridge is empty"));
    CHECK_THROWS(QTBUS_EINVAL, out.stats());
    CHECK_THROWS(QTBUS_EINVAL, out.is_connected());
    std::puts("cxx_nats: type, pattern and subtype cross; undone; closed");
}

void refusals(const char *url)
{
    qtbus::bus bus;

    // No server there: EIO, the url named, nats.c's reason; the password hidden.
    qtbus::error e = thrown([&] { qtbus::nats::bridge b(bus, "nats://user:s3cret@127.0.0.1:1"); });
    CHECK_EQ(e.status(), QTBUS_EIO);
    CHECK(contains(e.what(), "qtbus_nats_connect: no server at nats://user:***@127.0.0.1:1 could be reached"));
    CHECK(!contains(e.what(), "s3cret"));
    std::printf("cxx_nats: %s\n", e.what());

    // A server reached that refuses the password: EACCES, which says so, the password
    // hidden.
    {
        std::string auth = cxx_ns_start_config("authorization {\n  users = [ { user: orders, password: pw } ]\n}\n");
        std::string wrong = auth.substr(0, 7) + "orders:guessed@" + auth.substr(7);
        e = thrown([&] { qtbus::nats::bridge b(bus, wrong); });
        cxx_ns_stop_config();
        CHECK_EQ(e.status(), QTBUS_EACCES);
        CHECK(contains(e.what(), "qtbus_nats_connect: the server at nats://orders:***@127.0.0.1:"));
        CHECK(contains(e.what(), " was reached and refused access: "));
        CHECK(!contains(e.what(), "guessed"));
        std::printf("cxx_nats: %s\n", e.what());
    }

    e = thrown([&] { qtbus::nats::bridge b(bus, std::string("nats://user:s3cret@127.0.0.1:1\0x", 32)); });
    CHECK_EQ(e.status(), QTBUS_EINVAL);
    CHECK_EQ(std::string(e.what()), "qtbus_nats_connect: the url holds a NUL byte (at byte 30)");

    e = thrown([&] { qtbus::nats::bridge b(bus, " , "); });
    CHECK_EQ(e.status(), QTBUS_EINVAL);
    CHECK(contains(e.what(), "lists no server"));

    qtbus::nats::options bad;
    bad.request_timeout = std::chrono::milliseconds(-1);
    CHECK_THROWS(QTBUS_EINVAL, qtbus::nats::bridge(bus, url, bad));
    bad = {};
    bad.prefix = "a.*";
    e = thrown([&] { qtbus::nats::bridge b(bus, url, bad); });
    CHECK(contains(e.what(), "qtbus_nats_connect: options->prefix is not a NATS subject"));

    qtbus::nats::bridge b(bus, url);
    e = thrown([&] { b.export_events(""); });
    CHECK_EQ(e.status(), QTBUS_EINVAL);
    CHECK_EQ(std::string(e.what()), "qtbus_nats_export: the type name \"\" is empty");
    e = thrown([&] { b.import_events(std::string("a\0b", 3)); });
    CHECK_EQ(std::string(e.what()), "qtbus_nats_import: the type name \"a\\x00b\" holds a NUL byte (at byte 1)");
    e = thrown([&] { b.import_events("Order.>.x"); });
    CHECK(contains(e.what(), "qtbus_nats_import: the pattern \"Order.>.x\""));
    e = thrown([&] { b.import_events("T", ""); });
    CHECK(contains(e.what(), "qtbus_nats_import_subtype: the subtype \"\" is empty"));
    e = thrown([&] { (void)b.unexport_events(""); });
    CHECK(contains(e.what(), "qtbus_nats_unexport: "));
    std::puts("cxx_nats: refusals thrown with the library's words");
}

void ownership(const char *url)
{
    qtbus::bus bus;
    qtbus::nats::bridge a(bus, url);
    qtbus_nats *c = a.c_bridge();
    qtbus::nats::bridge moved(std::move(a));
    CHECK(!a && moved.c_bridge() == c);
    CHECK(a.close()); // empty: nothing to do

    // Assigning closes what the target held.
    qtbus::nats::bridge other(bus, url);
    other = std::move(moved);
    CHECK(other.c_bridge() == c && !moved);

    // release(): the caller's to close.
    qtbus_nats *raw = other.release();
    CHECK(raw == c && !other);
    CHECK_EQ(qtbus_nats_close(raw), QTBUS_OK);

    // Adopting a C bridge.
    qtbus_nats *made = nullptr;
    qtbus_nats_options o{};
    o.url = url;
    CHECK_EQ(qtbus_nats_connect(bus.c_bus(), &o, &made), QTBUS_OK);
    {
        qtbus::nats::bridge adopted(made, bus.c_bus());
        CHECK(adopted.is_connected());
    } // closed here
    std::puts("cxx_nats: moved, assigned, released and adopted bridges close once");
}

void nats_c(const char *url)
{
    qtbus::bus here, there;
    inbox got;
    qtbus::subscription s = there.subscribe("Tick", got.handler());

    // connect_with: the caller's natsOptions, reusable once the call returns.
    natsOptions *opts = nullptr;
    CHECK_EQ(natsOptions_Create(&opts), NATS_OK);
    CHECK_EQ(natsOptions_SetURL(opts, url), NATS_OK);
    CHECK_EQ(natsOptions_SetName(opts, "cxx_nats"), NATS_OK);
    qtbus::nats::options prefixed;
    prefixed.prefix = "acme.test";
    qtbus::nats::bridge out = qtbus::nats::bridge::connect_with(here, opts, prefixed);
    natsOptions_Destroy(opts);

    // attach: the application's connection, left open by the bridge.
    natsConnection *conn = nullptr;
    CHECK_EQ(natsConnection_ConnectTo(&conn, url), NATS_OK);
    {
        qtbus::nats::bridge in = qtbus::nats::bridge::attach(there, conn, prefixed);
        in.import_events("Tick");
        out.export_events("Tick");
        here.dispatch("Tick", "1");
        got.wait_for(1);
        CHECK(got.is({"Tick:1"}));

        // Another prefix is another space: nothing crosses.
        qtbus::nats::bridge plain(there, url);
        plain.import_events("Tick");
        here.dispatch("Tick", "2");
        got.wait_for(2);
        CHECK(in.stats().received == 2 && plain.stats().received == 0);
    }
    CHECK(!natsConnection_IsClosed(conn));
    natsConnection_Destroy(conn);

    CHECK_THROWS(QTBUS_EINVAL, qtbus::nats::bridge::attach(here, nullptr));
    CHECK_THROWS(QTBUS_EINVAL, qtbus::nats::bridge::connect_with(here, nullptr));
    std::puts("cxx_nats: connect_with (natsOptions) and attach (natsConnection, left open)");
}

// options.jetstream: a sticky event kept by the server reaches a bridge that imports
// its type later (the test's server runs JetStream).
void jetstream(const char *url)
{
    qtbus::nats::options js;
    js.jetstream = true;
    js.prefix = "cxx.js";
    qtbus::bus here, later;
    qtbus::nats::bridge out(here, url, js);
    out.export_events("Config");
    qtbus_event_desc d{};
    d.type = "Config";
    d.subtype = "eu";
    d.data = "v1";
    d.size = 2;
    d.flags = QTBUS_EVENT_STICKY;
    here.dispatch(d);
    CHECK(out.close()); // flushed: the stream has it

    inbox got;
    qtbus::subscription s = later.subscribe("Config", got.handler());
    qtbus::nats::bridge in(later, url, js);
    in.import_events("Config");
    got.wait_for(1);
    CHECK(got.is({"Config/eu:v1"}));
    std::puts("cxx_nats: options.jetstream: a later import receives the kept sticky event");
}

void restart(const char *url)
{
    qtbus::bus bus;
    qtbus::nats::bridge b(bus, url);
    CHECK(b.is_connected());
    cxx_ns_kill();
    wait_until([&] { return !b.is_connected(); });
    cxx_ns_restart();
    wait_until([&] { return b.is_connected(); });
    CHECK(b.stats().reconnects >= 1);
    std::printf("cxx_nats: reconnected after a server restart (reconnects %llu)\n",
                static_cast<unsigned long long>(b.stats().reconnects));
}

// close(timeout): within the time with the server gone (false: what was published is
// dropped, qtbus_errmsg() says so); true with the server up, at once; an empty bridge's
// does nothing.
void close_timeout(const char *url)
{
    qtbus::bus bus;
    {
        qtbus::nats::bridge b(bus, url);
        b.export_events("Gone");
        cxx_ns_kill();
        wait_until([&] { return !b.is_connected(); });
        CHECK_EQ(bus.dispatch("Gone", "x"), 1); // waits in the reconnect buffer
        const auto start = std::chrono::steady_clock::now();
        CHECK(!b.close(std::chrono::milliseconds(300)));
        const auto took =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        std::printf("cxx_nats: close(300ms) with the server gone: false after %lld ms: %s\n",
                    static_cast<long long>(took.count()), qtbus_errmsg());
        CHECK(took.count() >= 290 && took.count() <= 600);
        CHECK(contains(qtbus_errmsg(), "qtbus_nats_close_timeout: the timeout (300 ms) cut the close short: "));
        CHECK(!b);
        CHECK(b.close(std::chrono::milliseconds(0))); // empty: nothing to do
        cxx_ns_restart();
    }
    qtbus::nats::bridge b(bus, url);
    b.export_events("Fine");
    CHECK_EQ(bus.dispatch("Fine", "y"), 1);
    CHECK(b.close(std::chrono::milliseconds(1000)));
    CHECK(!b);
    qtbus::nats::bridge c(bus, url);
    CHECK(c.close(std::chrono::milliseconds(-5))); // a time already past: at once
    std::puts("cxx_nats: close(timeout) within the time, false when it dropped, true when not");
}

} // namespace

int main()
{
    const char *url = cxx_ns_start();
    try {
        crossing(url);
        refusals(url);
        ownership(url);
        jetstream(url);
        nats_c(url);
        restart(url);
        close_timeout(url);
    } catch (const qtbus::error &e) {
        std::fprintf(stderr, "cxx_nats: unexpected qtbus::error (%d): %s\n", e.status(), e.what());
        cxx_ns_stop();
        return 1;
    }
    cxx_ns_stop();
    std::puts("cxx_nats: passed");
    return 0;
}
