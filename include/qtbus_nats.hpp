// SPDX-License-Identifier: MIT
/*
 * qtbus_nats.hpp -- the C++ interface of libqtbus-nats (qtbus_nats.h): a bus joined to
 * a NATS server as an RAII object over the C API, in qtbus.hpp's style.  Header-only,
 * C++17; it needs neither nats.c's headers nor anything but qtbus_nats.h and qtbus.hpp.
 *
 *     #include <qtbus_nats.hpp>
 *     c++ -std=c++17 app.cpp $(pkg-config --cflags --libs qtbus-nats)
 *
 *     qtbus::bus bus;                                                  // first: it outlives the bridge
 *     qtbus::nats::bridge bridge(bus, "nats://127.0.0.1:4222");         // throws qtbus::error
 *     bridge.export_events("Order.>");      // local dispatches of Order.* types are published
 *     bridge.import_events("Price");        // Price events from NATS are dispatched on `bus`
 *     ...
 *     // the destructor closes it: what was published is flushed, what was received dispatched
 *
 * What the calls do is qtbus_nats.h's (subjects, patterns, delivery, requests, sticky
 * events, threads): this header only gives them C++ types.
 *
 * RULES (qtbus.hpp's hold; these are the bridge's side of them)
 *   - Names.  C's qtbus_nats_<verb>(bridge, type) is bridge.<verb>_events(type), for the
 *     six verbs alike: `export` is a C++ keyword (and `import` a module keyword since
 *     C++20), so none is spelled bare:
 *         qtbus_nats_export(b, t)               b.export_events(t)
 *         qtbus_nats_import(b, t)               b.import_events(t)
 *         qtbus_nats_import_subtype(b, t, s)    b.import_events(t, s)
 *         qtbus_nats_unexport(b, t)             b.unexport_events(t)
 *         qtbus_nats_unimport(b, t)             b.unimport_events(t)
 *         qtbus_nats_unimport_subtype(b, t, s)  b.unimport_events(t, s)
 *     A type with a whole token "*" or ">" is a pattern (qtbus_nats.h, PATTERNS), as in
 *     C; qtbus::pattern("Order.>"), as bus_ref::subscribe takes it, is taken too and
 *     says so where it is written.
 *   - A failing call throws qtbus::error and changed nothing: status() is the
 *     qtbus_status, what() qtbus_errmsg()'s words under the C function's name:
 *         qtbus_nats_connect: no server at nats://127.0.0.1:1 could be reached: ...
 *     Names are passed as std::string_view (a NUL byte in one is QTBUS_EINVAL, reported
 *     as qtbus.hpp reports it); the url never appears in a message of this header's own
 *     (it may hold a password: the library's messages show it as "***").
 *   - Ending never throws.  The destructor, close() and close(timeout) close the
 *     bridge; unexport_events and unimport_events of what this bridge does not export
 *     or import (never, or no longer: QTBUS_ESTALE) return false, as ending what has
 *     already ended is not a failure (qtbus.hpp).  close() returns false when the
 *     library's close returned QTBUS_EIO, close(timeout) also for QTBUS_ETIMEDOUT: the
 *     bridge is closed and freed all the same, but what it was to deliver may be lost
 *     (a flush or a drain did not complete, received events were not dispatched);
 *     qtbus_errmsg() on this thread then says what, and the bus's trace hook had a
 *     MISUSE record.
 *   - A bridge holds at most one qtbus_nats and is move-only; a moved-from, released or
 *     closed bridge is empty: its destructor and both close() do nothing, and any other call
 *     throws qtbus::error (QTBUS_EINVAL, "the qtbus::nats::bridge is empty ...").
 *   - Lifetime: a bridge must be closed before its bus is destroyed, so declare the bus
 *     first (members and locals are destroyed in the reverse order).  Event handlers of
 *     imported types run on the bridge's thread (qtbus_nats.h, DELIVERY), where
 *     qtbus.hpp's exception rule applies.
 *   - Threads: every call may be made from any thread, as in C, except that close(), the
 *     destructor and assignments must not overlap another call on the same object (as
 *     for any C++ object).
 *   - [[nodiscard]]: the class, so that `qtbus::nats::bridge(bus, url);` alone, which
 *     closes at once, is a warning.
 */
#ifndef QTBUS_NATS_HPP
#define QTBUS_NATS_HPP

#include <qtbus.hpp>
#include <qtbus_nats.h>

#include <chrono>
#include <climits>
#include <string>
#include <string_view>
#include <utility>

/* As qtbus.hpp's (which it #undefs): a message under C++20 only. */
#if __cplusplus >= 202002L
#define QTBUS_NATS_CXX_NODISCARD(message) [[nodiscard(message)]]
#else
#define QTBUS_NATS_CXX_NODISCARD(message) [[nodiscard]]
#endif

namespace qtbus {
namespace nats {

/* qtbus_nats_options but the url (the bridge's constructor takes it; connect_with and
 * attach have none). */
struct options {
    std::string prefix;                           /* the subjects' first tokens; empty: "qtbus" */
    bool jetstream = false;                       /* sticky events kept in a JetStream stream */
    std::chrono::milliseconds request_timeout{0}; /* how long a bridged request collects remote replies; 0: 1 s */
};

namespace detail {

/* `o` as the C struct, for `call` on `bus`: valid while `o` is (prefix is o.prefix's). */
inline qtbus_nats_options c_options(const options &o, const char *call, qtbus_bus *bus)
{
    qtbus::detail::check_no_nul(o.prefix, call, "prefix", bus);
    qtbus_nats_options c{};
    c.prefix = o.prefix.empty() ? nullptr : o.prefix.c_str();
    c.jetstream = o.jetstream ? 1 : 0;
    const auto ms = o.request_timeout.count();
    // A negative timeout goes to the library, which refuses it (QTBUS_EINVAL).
    c.request_timeout_ms = ms < 0 ? -1 : ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
    return c;
}

} // namespace detail

class QTBUS_NATS_CXX_NODISCARD("a dropped qtbus::nats::bridge is closed at once: keep it while it should export "
                               "and import") bridge {
  public:
    /* An empty bridge (nothing to close). */
    bridge() noexcept = default;

    /* Connects `bus` to the NATS server(s) at `url` (qtbus_nats_connect: "nats://host:4222",
     * a comma-separated list for a cluster, credentials in an entry).  Throws
     * qtbus::error: QTBUS_EIO when no server could be reached (what() names the url,
     * secrets as "***", and nats.c's reason), QTBUS_EACCES when a server was reached and
     * refused access (wrong or missing credentials: what() says so, naming the url),
     * QTBUS_EINVAL for a url that lists no server or options the library refuses,
     * QTBUS_ENOMEM. */
    bridge(bus_ref bus, std::string_view url, const options &o = {}) : bus_(bus.c_bus())
    {
        static const char call[] = "qtbus_nats_connect";
        const size_t nul = url.find('\0');
        if (nul != std::string_view::npos) {
            qtbus::detail::refuse(bus_, call, QTBUS_EINVAL,
                                  "the url holds a NUL byte (at byte " + std::to_string(nul) + ")");
        }
        const std::string u(url);
        qtbus_nats_options c = detail::c_options(o, call, bus_);
        c.url = u.c_str();
        qtbus::detail::check(qtbus_nats_connect(bus_, &c, &b_), call);
    }

    /* Connects with nats.c options the caller set with nats.c's own setters (TLS, user
     * and password, token, NKey, credentials file, name, reconnect, retry on failed
     * connect): qtbus_nats_connect_with, whose rules hold (the bridge sets its own
     * no-echo and error handler on them for the connect; the caller keeps and destroys
     * them).  `nats_options` is nats.c's natsOptions *. */
    static bridge connect_with(bus_ref bus, struct __natsOptions *nats_options, const options &o = {})
    {
        static const char call[] = "qtbus_nats_connect_with";
        qtbus_nats_options c = detail::c_options(o, call, bus.c_bus());
        qtbus_nats *b = nullptr;
        qtbus::detail::check(qtbus_nats_connect_with(bus.c_bus(), nats_options, &c, &b), call);
        return bridge(b, bus.c_bus());
    }

    /* Bridges `bus` over a connection the application has (nats.c's natsConnection *):
     * qtbus_nats_attach.  The connection stays the application's: closing the bridge
     * never closes it; close the bridge first. */
    static bridge attach(bus_ref bus, struct __natsConnection *conn, const options &o = {})
    {
        static const char call[] = "qtbus_nats_attach";
        qtbus_nats_options c = detail::c_options(o, call, bus.c_bus());
        qtbus_nats *b = nullptr;
        qtbus::detail::check(qtbus_nats_attach(bus.c_bus(), conn, &c, &b), call);
        return bridge(b, bus.c_bus());
    }

    /* Adopts a bridge made by C code (qtbus_nats_connect...) for `bus`, its bus (used
     * only to report this header's own refusals to its trace hook; nullptr: none). */
    explicit bridge(qtbus_nats *adopt, qtbus_bus *bus = nullptr) noexcept : b_(adopt), bus_(bus) {}

    bridge(bridge &&o) noexcept : b_(std::exchange(o.b_, nullptr)), bus_(std::exchange(o.bus_, nullptr)) {}
    bridge &operator=(bridge &&o) noexcept
    {
        if (this != &o) {
            close();
            b_ = std::exchange(o.b_, nullptr);
            bus_ = std::exchange(o.bus_, nullptr);
        }
        return *this;
    }
    bridge(const bridge &) = delete;
    bridge &operator=(const bridge &) = delete;
    ~bridge() { close(); }

    /* ---- exports and imports (qtbus_nats.h's rules; patterns too) ---- */

    /* Every local dispatch of `type` (or of a type the pattern matches) is published. */
    void export_events(std::string_view type) { name_call(qtbus_nats_export, "qtbus_nats_export", type); }
    void export_events(const pattern &p) { export_events(p.text); }

    /* Events of `type` (or of the types the pattern matches) that other bridges publish
     * are dispatched on the bus, on the bridge's thread.  Returns once the server has
     * the subscription (at most about 2 s; QTBUS_EIO after that, QTBUS_EACCES when the
     * server's permissions refuse it). */
    void import_events(std::string_view type) { name_call(qtbus_nats_import, "qtbus_nats_import", type); }
    void import_events(const pattern &p) { import_events(p.text); }
    /* Only the events of `type` with this `subtype` (qtbus_nats_import_subtype). */
    void import_events(std::string_view type, std::string_view subtype)
    {
        static const char call[] = "qtbus_nats_import_subtype";
        qtbus_nats *b = held(call);
        qtbus::detail::name t(type, call, "type name", bus_), s(subtype, call, "subtype", bus_);
        qtbus::detail::check(qtbus_nats_import_subtype(b, t.c_str(), s.c_str()), call);
    }

    /* Undo export_events / import_events of exactly that type or pattern: true when it
     * was undone, false when this bridge did not export (import) it (QTBUS_ESTALE).
     * unimport_events waits until what the server had sent for it is dispatched (at
     * most 3 s).  Throws qtbus::error for a name the library refuses. */
    bool unexport_events(std::string_view type) { return undo(qtbus_nats_unexport, "qtbus_nats_unexport", type); }
    bool unexport_events(const pattern &p) { return unexport_events(p.text); }
    bool unimport_events(std::string_view type) { return undo(qtbus_nats_unimport, "qtbus_nats_unimport", type); }
    bool unimport_events(const pattern &p) { return unimport_events(p.text); }
    bool unimport_events(std::string_view type, std::string_view subtype)
    {
        static const char call[] = "qtbus_nats_unimport_subtype";
        qtbus_nats *b = held(call);
        qtbus::detail::name t(type, call, "type name", bus_), s(subtype, call, "subtype", bus_);
        const int rc = qtbus_nats_unimport_subtype(b, t.c_str(), s.c_str());
        if (rc == QTBUS_ESTALE) return false;
        qtbus::detail::check(rc, call);
        return true;
    }

    /* ---- state ---- */

    /* published, received, dropped, reconnects, pending (qtbus_nats_stats_get). */
    qtbus_nats_stats stats() const
    {
        static const char call[] = "qtbus_nats_stats_get";
        qtbus_nats_stats s{};
        qtbus::detail::check(qtbus_nats_stats_get(held(call), &s), call);
        return s;
    }
    /* Connected now (false while nats.c reconnects: publications wait in its buffer). */
    bool is_connected() const
    {
        static const char call[] = "qtbus_nats_is_connected";
        return qtbus::detail::check(qtbus_nats_is_connected(held(call)), call) == 1;
    }

    /* ---- ending ---- */

    /* Closes and frees the bridge (qtbus_nats_close: stops exporting and importing,
     * flushes, drains, dispatches what was received, disconnects; an attached
     * connection stays open), leaving this object empty.  True when everything reached
     * its end, or when the bridge was empty already; false for QTBUS_EIO (see RULES:
     * closed all the same, qtbus_errmsg() says what may be lost). */
    bool close() noexcept
    {
        if (!b_) return true;
        qtbus_nats *b = std::exchange(b_, nullptr);
        bus_ = nullptr;
        return qtbus_nats_close(b) == QTBUS_OK;
    }
    /* As close(), within `timeout` (qtbus_nats_close_timeout: one deadline for the
     * flush, the drains and the dispatch of what was received; what is not done by
     * then is dropped; 0: at once).  A negative timeout is 0, as a std::chrono wait
     * takes one whose time has passed; beyond INT_MAX ms, INT_MAX.  True when nothing
     * was dropped (or the bridge was empty); false for QTBUS_ETIMEDOUT (the time cut it
     * short) or QTBUS_EIO: closed all the same, qtbus_errmsg() on this thread says
     * what was dropped, and the bus's trace hook had a MISUSE record.  The destructor
     * keeps close()'s waits. */
    bool close(std::chrono::milliseconds timeout) noexcept
    {
        if (!b_) return true;
        qtbus_nats *b = std::exchange(b_, nullptr);
        bus_ = nullptr;
        const auto ms = timeout.count();
        return qtbus_nats_close_timeout(b, ms < 0 ? 0 : ms > INT_MAX ? INT_MAX : static_cast<int>(ms)) == QTBUS_OK;
    }
    /* Gives the C bridge up without closing it (the caller closes it); empty afterwards. */
    qtbus_nats *release() noexcept
    {
        bus_ = nullptr;
        return std::exchange(b_, nullptr);
    }

    explicit operator bool() const noexcept { return b_ != nullptr; }
    qtbus_nats *c_bridge() const noexcept { return b_; }

  private:
    qtbus_nats *held(const char *call) const
    {
        if (!b_) {
            qtbus::detail::refuse(nullptr, call, QTBUS_EINVAL,
                                  "the qtbus::nats::bridge is empty (default-made, moved from, released or closed)");
        }
        return b_;
    }
    void name_call(int (*f)(qtbus_nats *, const char *), const char *call, std::string_view type)
    {
        qtbus_nats *b = held(call);
        qtbus::detail::name t(type, call, "type name", bus_);
        qtbus::detail::check(f(b, t.c_str()), call);
    }
    bool undo(int (*f)(qtbus_nats *, const char *), const char *call, std::string_view type)
    {
        qtbus_nats *b = held(call);
        qtbus::detail::name t(type, call, "type name", bus_);
        const int rc = f(b, t.c_str());
        if (rc == QTBUS_ESTALE) return false;
        qtbus::detail::check(rc, call);
        return true;
    }

    qtbus_nats *b_ = nullptr;
    qtbus_bus *bus_ = nullptr; /* where this header's own refusals are reported */
};

} // namespace nats
} // namespace qtbus

#undef QTBUS_NATS_CXX_NODISCARD

#endif /* QTBUS_NATS_HPP */
