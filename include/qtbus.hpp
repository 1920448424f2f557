// SPDX-License-Identifier: MIT
/*
 * qtbus.hpp -- the C++ interface of libqtbus: callables, RAII and exceptions over the
 * C ABI of qtbus.h, in the spirit of Boost.Signals2 and sigc++.  Header-only, C++17.
 *
 *     #include <qtbus.hpp>
 *     c++ -std=c++17 app.cpp $(pkg-config --cflags --libs qtbus)
 *
 *     qtbus::bus bus;
 *     qtbus::subscription s = bus.subscribe("Login", [](const qtbus::event &e) {
 *         std::cout << "hello " << e.data() << "\n";
 *     });
 *     bus.dispatch("Login", "alice");   // 1: one handler reached
 *
 * RULES (qtbus.h's hold; these are the C++ side of them)
 *   - A handler is any callable taking `const qtbus::event &` (or nothing).  It is moved
 *     into the subscription, called as a non-const lvalue (so a `mutable` lambda may
 *     keep state), and destroyed exactly once by the release hook: after the
 *     subscription ends (dispose, bag, once, bus destroyed) and no call of it is running
 *     (lifetime rule 1).  Dispatches from several threads may call one handler at the
 *     same time, as with Boost.Signals2: guard what it shares.
 *   - Exceptions never cross into the library (a C callback must return normally): one
 *     that escapes a handler, a reply or completion callable, a command's execute or a
 *     source's start/stop is caught and passed to the function given to
 *     qtbus::set_exception_handler(), on the thread it was thrown on.  The default is
 *     std::terminate(), as a noexcept function would do.
 *   - A failing call throws qtbus::error; it then changed nothing, and a callable it was
 *     given is destroyed (never called).  status() is the qtbus_status; what() is the
 *     reason in qtbus_errmsg()'s words, read on the failing thread as soon as the C call
 *     returned, before any other call could replace it:
 *         qtbus_subscribe: the type name "" is empty
 *     (when the library left no reason naming that call: "qtbus_subscribe: " and
 *     qtbus_strerror(status)).  A failure this header finds itself (a NUL byte in a
 *     name, an empty subscription given to a bag) goes through qtbus_report(), so
 *     qtbus_errmsg(), QTBUS_DEBUG=misuse and the bus's trace hook see it as they see
 *     the library's own.
 *   - Destructors, dispose(), finish() and release() never throw.  Ending what has
 *     already ended (its bus destroyed, its bag disposed, a once that fired) is not a
 *     failure: there is nothing left to end.
 *   - Handles that end what they hold in their destructor are [[nodiscard]]: the classes
 *     subscription, bag, bus, queue, command, source, deferred_reply and scoped_block,
 *     and the functions that make them (bus_ref::subscribe, signal::connect, command and
 *     source, event::defer), with a message under C++20 that says what dropping one
 *     does.  Unlike a dropped Boost.Signals2 or sigc++ connection, which stays
 *     connected, a dropped subscription ends at once (its handler never runs), so
 *     `bus.subscribe("Tick", f);` alone is a warning, and an error under -Werror.  Keep
 *     the handle, move a subscription into a qtbus::bag, or call .release() to let it
 *     live on (until its bus is destroyed or its token disposed); `(void)` says ending
 *     at once is meant.  The classes are marked, not only this header's functions, so
 *     that a function of yours returning one by value warns the same way (clang also
 *     warns for a temporary made and dropped: `qtbus::subscription(token);` disposes
 *     `token`).  release() is how to let go without ending, so its result (a
 *     qtbus_token) may be dropped.  Non-owning types (bus_ref, event, execution,
 *     options, signal) are not marked.
 *   - A refusal a correct program cannot prevent is a result the caller must look at:
 *     command::execute() returns false when the command, disabled or busy, ran nothing,
 *     and is [[nodiscard]].  event::stop() returns false where nothing can be stopped
 *     (a queued delivery, a replay) but is not marked: in a handler on the dispatching
 *     thread, where it is meant to be used, it always stops.
 *   - Names are passed as std::string_view (copied to NUL-terminated storage for the C
 *     call) or as const char * (used as is); a name holding a NUL byte is QTBUS_EINVAL.
 *   - Every owning class (the [[nodiscard]] ones above) holds at most one handle and is
 *     move-only; a moved-from object is empty and its destructor does nothing.
 *
 * TYPED SIGNALS: qtbus::signal, in qtbus_signal.hpp, which this header includes at its
 * end (so `#include <qtbus.hpp>` has them, as it always had).
 *
 * OWNER TRACKING (qtbus::track: Boost.Signals2's track, sigc++'s trackable)
 *     bus.subscribe("Tick", qtbus::track(widget, [w = widget.get()] { w->redraw(); }));
 *     login.connect(qtbus::track(session, [s = session.get()](std::string_view u) { ... }));
 *   - track(owner, f), owner a std::weak_ptr<T> or a std::shared_ptr<T>, is a callable
 *     for subscribe or connect that calls f with the owner locked (a std::shared_ptr
 *     held for the call, so the owner outlives it).  Once the owner is gone, f is
 *     never called again, and the subscription is disposed no later than the next
 *     dispatch that reaches it (the call that finds the owner gone disposes it, from
 *     inside the handler; lifetime rules 1 and 2 then apply, f is destroyed by the
 *     release hook).  An owner gone before the subscribe ends the subscription at
 *     once: the subscription returned is no longer active().  qtbus cannot see a
 *     std::shared_ptr end, so until a dispatch reaches it the subscription still
 *     counts (subscriber_count, foreach).
 *   - track(owner2, track(owner1, f)): either owner going ends the one subscription.
 *     A tracked callable is move-only (it belongs to one subscription).
 */
#ifndef QTBUS_HPP
#define QTBUS_HPP

#include <qtbus.h>

#include <array>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

/* [[nodiscard]] with its message under C++20; C++17 has the attribute without one (a
 * message there is a C++20 extension, which -pedantic reports). */
#if __cplusplus >= 202002L
#define QTBUS_CXX_NODISCARD(message) [[nodiscard(message)]]
#else
#define QTBUS_CXX_NODISCARD(message) [[nodiscard]]
#endif

namespace qtbus {

/* ---- errors ---- */

/* A failed call: status() is the qtbus_status; what() says which call failed and why. */
class error : public std::runtime_error {
  public:
    /* what(): "call: " and qtbus_strerror(status) ("qtbus: ..." when call is nullptr). */
    explicit error(int status, const char *call = nullptr) : std::runtime_error(text(status, call)), status_(status) {}
    /* what(): `reason` as given, in qtbus_errmsg()'s form ("call: why"); when it is
     * empty, the text of the constructor above.  The header's own calls pass what
     * qtbus_errmsg() said at the failure. */
    error(int status, const char *call, std::string_view reason)
        : std::runtime_error(reason.empty() ? text(status, call) : std::string(reason)), status_(status)
    {
    }
    int status() const noexcept { return status_; }

  private:
    static std::string text(int status, const char *call)
    {
        return std::string(call ? call : "qtbus") + ": " + qtbus_strerror(status);
    }
    int status_;
};

/* Receives every exception a callable let escape (see RULES).  Returns the previous
 * one; an empty function restores the default, std::terminate().  The handler runs on
 * the thread that threw, possibly inside a dispatch: it must not throw itself. */
using exception_handler = std::function<void(std::exception_ptr)>;

namespace detail {

struct exception_slot {
    std::mutex lock;
    exception_handler handler;
};
inline exception_slot &exceptions()
{
    static exception_slot slot;
    return slot;
}

/* Called from a catch (...) inside a C callback: nothing may leave it. */
inline void route_current_exception() noexcept
{
    exception_handler h;
    {
        std::lock_guard<std::mutex> guard(exceptions().lock);
        h = exceptions().handler;
    }
    if (!h) std::terminate();
    try {
        h(std::current_exception());
    } catch (...) {
        std::terminate();
    }
}

/* The error for `call`, which just returned `status` on this thread: with the reason
 * qtbus_errmsg() gives, read before anything else can replace it.  A text that does
 * not start with "call:" is left over from an earlier failure (of another call, or
 * from a library that gives no reason for this one) and would mislead: the status
 * text is used instead. */
inline error failure(int status, const char *call)
{
    const char *why = qtbus_errmsg();
    std::string_view reason = why ? std::string_view(why) : std::string_view();
    const size_t n = std::strlen(call);
    if (!(reason.size() > n + 1 && reason.compare(0, n, call) == 0 && reason[n] == ':')) reason = {};
    return error(status, call, reason);
}

inline int check(int status, const char *call)
{
    if (status < 0) throw failure(status, call);
    return status;
}

/* A failure this header finds before any C call: reported through qtbus_report() (the
 * thread's qtbus_errmsg(), QTBUS_DEBUG=misuse, the trace hook of `bus` when not
 * nullptr), then thrown as the library's own are. */
[[noreturn]] inline void refuse(qtbus_bus *bus, const char *call, int status, const std::string &reason)
{
    qtbus_report(bus, call, status, reason.c_str());
    throw failure(status, call);
}

/* `s` quoted as qtbus_errmsg() quotes names: printable ASCII as is, other bytes as
 * \xNN, at most 48 bytes of it. */
inline std::string quoted(std::string_view s)
{
    static const char hex[] = "0123456789abcdef";
    std::string out = "\"";
    const size_t shown = s.size() < 48 ? s.size() : 48;
    for (size_t i = 0; i < shown; i++) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (shown < s.size()) out += "...";
    return out + "\"";
}

/* Refuses `s`, the `role` of `call` ("type name", "subtype"...), when it holds a NUL
 * byte: a C string would end there, and the call would get another name. */
inline void check_no_nul(std::string_view s, const char *call, const char *role, qtbus_bus *bus)
{
    const size_t at = s.find('\0');
    if (at != std::string_view::npos) {
        refuse(bus, call, QTBUS_EINVAL,
               std::string("the ") + role + " " + quoted(s) + " holds a NUL byte (at byte " + std::to_string(at) + ")");
    }
}

/* A string_view as a NUL-terminated name: names are at most 255 bytes, so short ones
 * fit on the stack; a longer one is copied too and left to the library to refuse. */
class name {
  public:
    name(std::string_view s, const char *call, const char *role, qtbus_bus *bus = nullptr)
    {
        check_no_nul(s, call, role, bus);
        if (s.size() < sizeof small_) {
            std::memcpy(small_, s.data(), s.size());
            small_[s.size()] = '\0';
            p_ = small_;
        } else {
            large_.assign(s.data(), s.size());
            p_ = large_.c_str();
        }
    }
    name(const name &) = delete;
    name &operator=(const name &) = delete;
    const char *c_str() const noexcept { return p_; }

  private:
    char small_[256];
    std::string large_;
    const char *p_;
};

inline const void *bytes(std::string_view s) noexcept { return s.empty() ? nullptr : s.data(); }

/* Calls `f` with what it takes: (args...) or nothing. */
template <class F, class... Args>
void call(F &f, Args &&...args)
{
    if constexpr (std::is_invocable_v<F &, Args...>) {
        f(std::forward<Args>(args)...);
    } else {
        static_assert(std::is_invocable_v<F &>, "qtbus: the callable takes neither the documented arguments nor none");
        f();
    }
}

/* The release hook of a heap-held callable: destroys it, once. */
template <class T>
void destroy(void *p) noexcept
{
    delete static_cast<T *>(p);
}

} // namespace detail

inline exception_handler set_exception_handler(exception_handler h)
{
    std::lock_guard<std::mutex> guard(detail::exceptions().lock);
    std::swap(detail::exceptions().handler, h);
    return h;
}

/* ---- event headers (qtbus.h, "Event headers") ---- */

/* The headers a dispatch gives its event, built from a list:
 *
 *     bus.dispatch("Order", bytes, qtbus::headers{{"traceparent", tp}, {"baggage", b}});
 *
 * The strings are copied here, and again by the library.  The rules (names, values,
 * limits) are the library's: a header that breaks them makes the call throw
 * qtbus::error (QTBUS_EINVAL, with the reason); a name or value holding a NUL byte is
 * refused here, before any C call (a C string would end there). */
class headers {
  public:
    headers() = default;
    headers(std::initializer_list<std::pair<std::string_view, std::string_view>> list)
    {
        strings_.reserve(2 * list.size());
        for (const auto &h : list)
            add(h.first, h.second);
    }
    /* One more header (a name given twice: the last value wins, as in C). */
    headers &add(std::string_view name, std::string_view value)
    {
        strings_.emplace_back(name);
        strings_.emplace_back(value);
        return *this;
    }
    std::size_t size() const noexcept { return strings_.size() / 2; }
    bool empty() const noexcept { return strings_.empty(); }

    /* Points `d` at these headers (QTBUS_EVENT_HEADERS set); `out` holds the C array
     * for the call. */
    void fill(qtbus_event_desc &d, std::vector<qtbus_header> &out, const char *call, qtbus_bus *bus) const
    {
        out.clear();
        out.reserve(size());
        for (std::size_t i = 0; i < strings_.size(); i += 2) {
            detail::check_no_nul(strings_[i], call, "header name", bus);
            detail::check_no_nul(strings_[i + 1], call, "header value", bus);
            out.push_back(qtbus_header{strings_[i].c_str(), strings_[i + 1].c_str()});
        }
        d.flags |= QTBUS_EVENT_HEADERS;
        d.headers = out.data();
        d.header_count = out.size();
    }

  private:
    std::vector<std::string> strings_; /* name, value, name, value... */
};

/* One header of an event a handler received (valid while the handler runs). */
struct header {
    std::string_view name;
    std::string_view value;
};

/* An event's headers in qtbus_event_header_at's order: the given ones (a repeated name
 * once, its last value at its first place), then the inherited ones. */
class header_range {
  public:
    class iterator {
      public:
        using iterator_category = std::input_iterator_tag;
        using value_type = header;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = header;
        iterator(const qtbus_event *e, std::size_t i) noexcept : e_(e), i_(i) {}
        header operator*() const
        {
            const char *name = nullptr, *value = nullptr;
            detail::check(qtbus_event_header_at(e_, i_, &name, &value), "qtbus_event_header_at");
            return header{name, value};
        }
        iterator &operator++() noexcept
        {
            ++i_;
            return *this;
        }
        iterator operator++(int) noexcept
        {
            iterator old = *this;
            ++i_;
            return old;
        }
        bool operator==(const iterator &o) const noexcept { return i_ == o.i_; }
        bool operator!=(const iterator &o) const noexcept { return i_ != o.i_; }

      private:
        const qtbus_event *e_;
        std::size_t i_;
    };
    explicit header_range(const qtbus_event *e) noexcept : e_(e), n_(qtbus_event_header_count(e)) {}
    iterator begin() const noexcept { return iterator(e_, 0); }
    iterator end() const noexcept { return iterator(e_, n_); }
    std::size_t size() const noexcept { return n_; }
    bool empty() const noexcept { return n_ == 0; }

  private:
    const qtbus_event *e_;
    std::size_t n_;
};

/* ---- the event a callable receives ---- */

class deferred_reply;

/* A view of qtbus_event, valid only during the call that received it: copy what you
 * keep (std::string(e.data())). */
class event {
  public:
    explicit event(const qtbus_event *e) noexcept : e_(e) {}

    std::string_view type() const { return qtbus_event_type(e_); }
    std::optional<std::string_view> subtype() const
    {
        const char *s = qtbus_event_subtype(e_);
        if (!s) return std::nullopt;
        return std::string_view(s);
    }
    /* The bytes (empty when none). */
    std::string_view data() const
    {
        size_t size = 0;
        const void *d = qtbus_event_data(e_, &size);
        return d ? std::string_view(static_cast<const char *>(d), size) : std::string_view();
    }
    void *object() const { return qtbus_event_object(e_); }
    /* The value of the header `name` (given or inherited; names are case-sensitive),
     * or nullopt when the event has none of that name. */
    std::optional<std::string_view> header(std::string_view name) const
    {
        if (name.find('\0') != std::string_view::npos) return std::nullopt;
        const std::string n(name);
        const char *v = qtbus_event_header(e_, n.c_str());
        if (!v) return std::nullopt;
        return std::string_view(v);
    }
    /* Every header, in qtbus_event_header_at's order: for (auto h : e.headers()) h.name, h.value. */
    header_range headers() const noexcept { return header_range(e_); }
    /* No later handler of this dispatch receives the event.  False where it cannot stop
     * (a queued delivery, a replay: qtbus_event_stop's QTBUS_EINVAL). */
    bool stop() const { return qtbus_event_stop(e_) == QTBUS_OK; }
    /* Replies to the sender of a request (its reply callable runs now, on this
     * thread).  Throws qtbus::error (QTBUS_EINVAL) when the event is not a request. */
    void reply(std::string_view bytes) const
    {
        detail::check(qtbus_event_reply(e_, detail::bytes(bytes), bytes.size()), "qtbus_event_reply");
    }
    /* From a handler of a request that answers after it returns: the request stays
     * open until the deferred_reply is finished (qtbus_event_defer).  Throws
     * qtbus::error (QTBUS_EINVAL) when the event is not a request. */
    QTBUS_CXX_NODISCARD("dropping the deferred_reply finishes the request at once, unanswered: keep it until you "
                        "have replied")
    deferred_reply defer() const;
    /* QTBUS_EVENT_STICKY and QTBUS_EVENT_REQUEST bits (qtbus_event_flags). */
    uint32_t flags() const noexcept { return qtbus_event_flags(e_); }
    bool sticky() const noexcept { return (flags() & QTBUS_EVENT_STICKY) != 0; }
    bool is_request() const noexcept { return (flags() & QTBUS_EVENT_REQUEST) != 0; }
    const qtbus_event *c_event() const noexcept { return e_; }

  private:
    const qtbus_event *e_;
};

namespace detail {

template <class F>
void handle(const qtbus_event *e, void *userdata) noexcept
{
    try {
        event ev(e);
        call(*static_cast<F *>(userdata), static_cast<const event &>(ev));
    } catch (...) {
        route_current_exception();
    }
}

/* One C handle (an id struct) owned: move-only, disposed by the destructor or
 * dispose(), empty ({0}) afterwards and after a move.  The base of subscription, bag,
 * command and source. */
template <class Handle, int (*Dispose)(Handle)>
class owned_handle {
  public:
    owned_handle(owned_handle &&o) noexcept : h_(o.release()) {}
    owned_handle &operator=(owned_handle &&o) noexcept
    {
        if (this != &o) {
            dispose();
            h_ = o.release();
        }
        return *this;
    }
    owned_handle(const owned_handle &) = delete;
    owned_handle &operator=(const owned_handle &) = delete;
    ~owned_handle() { dispose(); }

    void dispose() noexcept
    {
        if (h_.id) Dispose(h_);
        h_ = Handle{0};
    }

  protected:
    owned_handle() noexcept = default;
    explicit owned_handle(Handle h) noexcept : h_(h) {}
    Handle release() noexcept
    {
        Handle h = h_;
        h_ = Handle{0};
        return h;
    }
    Handle h_{0};
};

} // namespace detail

/* ---- subscriptions and bags ---- */

class QTBUS_CXX_NODISCARD("a dropped qtbus::subscription ends at once: keep it, move it into a qtbus::bag, "
                          "or call .release()") subscription
    : public detail::owned_handle<qtbus_token, qtbus_token_dispose> {
  public:
    subscription() noexcept = default;
    /* Adopts a token (from C code, or release()). */
    explicit subscription(qtbus_token token) noexcept : owned_handle(token) {}

    /* Live: not disposed, not fired (once), its bus not destroyed; blocked or not. */
    bool active() const noexcept { return h_.id != 0 && qtbus_token_is_active(h_) == 1; }
    /* qtbus_token_block() / qtbus_token_unblock(): blocks nest; while blocked, the
     * dispatches made leave the subscription out (qtbus.h says which, and what still
     * runs).  Throw qtbus::error with the C status: QTBUS_ESTALE once it has ended,
     * and for an empty subscription (its token is {0}); QTBUS_EINVAL for an unblock
     * too many or a block over QTBUS_MAX_BLOCKS.  Prefer qtbus::scoped_block, which
     * cannot forget the unblock. */
    void block() const { detail::check(qtbus_token_block(h_), "qtbus_token_block"); }
    void unblock() const { detail::check(qtbus_token_unblock(h_), "qtbus_token_unblock"); }
    /* dispose(): ends the subscription (lifetime rule 2); the handler is destroyed per
     * rule 1.  release(): detaches: the subscription lives on (until its bus is
     * destroyed, or the token is disposed); this object becomes empty. */
    using owned_handle::release;
    qtbus_token c_token() const noexcept { return h_; }
};

/* Blocks a subscription for its own lifetime, as Boost.Signals2's
 * shared_connection_block and Qt's QSignalBlocker: the constructor blocks (throwing as
 * subscription::block() does, and then nothing is blocked), the destructor unblocks
 * once.  The destructor never throws: a subscription that ended meanwhile (disposed,
 * fired, its bus destroyed) has nothing left to unblock, and that is ignored.  It holds
 * the token, not the subscription object: moving the subscription elsewhere meanwhile
 * changes nothing.  Not copyable or movable (one block, one unblock), as
 * std::lock_guard.
 *
 *     {
 *         qtbus::scoped_block quiet(s);
 *         bus.dispatch("Login", "alice");   // s's handler is not called
 *     }                                     // s is reached again */
class QTBUS_CXX_NODISCARD("a dropped qtbus::scoped_block unblocks at once: name it") scoped_block {
  public:
    explicit scoped_block(const subscription &s) : t_(s.c_token()) { s.block(); }
    scoped_block(const scoped_block &) = delete;
    scoped_block &operator=(const scoped_block &) = delete;
    ~scoped_block()
    {
        // Asked first, so that the common end (disposed meanwhile) leaves qtbus_errmsg()
        // and QTBUS_DEBUG=misuse alone; one that ends between the two is ignored too.
        if (qtbus_token_is_active(t_) == 1) (void)qtbus_token_unblock(t_);
    }
    qtbus_token c_token() const noexcept { return t_; }

  private:
    qtbus_token t_;
};

/* A request answered later (event::defer()): reply() from any thread; the request
 * completes once this is finished, by finish() or by the destructor, so one that goes
 * out of scope never holds its request open.  Move-only. */
class QTBUS_CXX_NODISCARD("a dropped qtbus::deferred_reply finishes its request at once: keep it until you "
                          "have replied") deferred_reply
    : public detail::owned_handle<qtbus_deferred, qtbus_deferred_finish> {
  public:
    deferred_reply() noexcept = default;
    explicit deferred_reply(qtbus_deferred d) noexcept : owned_handle(d) {}
    /* The requester's reply callable runs now, on this thread.  Throws qtbus::error
     * (QTBUS_ESTALE) once finished. */
    void reply(std::string_view bytes) const
    {
        detail::check(qtbus_deferred_reply(h_, detail::bytes(bytes), bytes.size()), "qtbus_deferred_reply");
    }
    void finish() noexcept { dispose(); }
    qtbus_deferred c_deferred() const noexcept { return h_; }
};

inline deferred_reply event::defer() const
{
    qtbus_deferred d{0};
    detail::check(qtbus_event_defer(e_, &d), "qtbus_event_defer");
    return deferred_reply(d);
}

/* Disposes every subscription put in it, in its destructor or dispose(). */
class QTBUS_CXX_NODISCARD("a dropped qtbus::bag disposes what it holds at once: keep it") bag
    : public detail::owned_handle<qtbus_bag, qtbus_bag_dispose> {
  public:
    bag() { detail::check(qtbus_bag_create(&h_), "qtbus_bag_create"); }

    /* Takes the subscription over (`s` becomes empty).  One that has already ended (a
     * once that fired on another thread meanwhile) is accepted: there is nothing left
     * to dispose.  An empty one (default-made, moved from, released or disposed) is
     * QTBUS_EINVAL: it never held what the caller means to keep here.  On failure (the
     * bag disposed, `s` in another bag) `s` keeps it. */
    void add(subscription &&s)
    {
        if (s.c_token().id == 0) {
            detail::refuse(nullptr, "qtbus_bag_add", QTBUS_EINVAL,
                           "the qtbus::subscription is empty (default-made, moved from, released or disposed)");
        }
        int rc = qtbus_bag_add(h_, s.c_token());
        if (rc == QTBUS_ESTALE && h_.id != 0 && !s.active()) rc = QTBUS_OK;
        detail::check(rc, "qtbus_bag_add");
        s.release();
    }
    bag &operator+=(subscription &&s)
    {
        add(std::move(s));
        return *this;
    }
    qtbus_bag c_bag() const noexcept { return h_; }
};

/* ---- queues ---- */

/* A bound for a queue (qtbus_queue_set_limit): at most `capacity` deliveries waiting,
 * and what happens to one more.  qtbus::limit{1000, QTBUS_OVERFLOW_DROP_OLDEST};
 * qtbus::limit{64, QTBUS_OVERFLOW_BLOCK, std::chrono::milliseconds(50)}.  The default,
 * {0, QTBUS_OVERFLOW_GROW}, is unbounded. */
struct limit {
    std::size_t capacity = 0;
    /* A qtbus_overflow; an integer so that a value read from a configuration reaches
     * the library's check (an unknown one is QTBUS_EINVAL) rather than being an enum
     * value out of range. */
    std::uint32_t overflow = QTBUS_OVERFLOW_GROW;
    /* QTBUS_OVERFLOW_BLOCK only: how long a dispatch waits for room before its
     * delivery is dropped (negative: no limit). */
    std::chrono::milliseconds block_timeout{-1};
};

/* A serial queue (owning), or the main queue (qtbus::queue::main()). */
class QTBUS_CXX_NODISCARD("a dropped qtbus::queue is released at once: keep it while subscriptions use it") queue {
  public:
    explicit queue(const char *label = nullptr) : q_(qtbus_queue_create(label))
    {
        if (!q_) throw detail::failure(QTBUS_ENOMEM, "qtbus_queue_create");
    }
    /* A bounded queue; throws qtbus::error (QTBUS_EINVAL) for a bad limit. */
    queue(const char *label, const limit &l) : queue(label) { set_limit(l); }
    queue(queue &&o) noexcept : q_(o.q_) { o.q_ = nullptr; }
    queue &operator=(queue &&o) noexcept
    {
        if (this != &o) {
            qtbus_queue_release(q_);
            q_ = o.q_;
            o.q_ = nullptr;
        }
        return *this;
    }
    queue(const queue &) = delete;
    queue &operator=(const queue &) = delete;
    /* Work already queued still runs (qtbus_queue_release). */
    ~queue() { qtbus_queue_release(q_); }

    static queue &main()
    {
        static queue m(qtbus_queue_main(), adopt);
        return m;
    }
    qtbus_queue *c_queue() const noexcept { return q_; }
    /* Bounds the queue, or makes it unbounded again with limit{} (qtbus_queue_set_limit:
     * any time, from any thread; the main queue too).  Throws qtbus::error. */
    void set_limit(const limit &l)
    {
        const auto ms = l.block_timeout.count();
        const int timeout = ms < 0 ? -1 : ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
        detail::check(qtbus_queue_set_limit(q_, l.capacity, l.overflow, timeout), "qtbus_queue_set_limit");
    }
    /* The queue's counts (qtbus_queue_stats_get): pending, high_water, delivered, and
     * dropped (by a bounded queue's overflow rule). */
    qtbus_queue_stats stats() const
    {
        qtbus_queue_stats s{};
        detail::check(qtbus_queue_stats_get(q_, &s), "qtbus_queue_stats_get");
        return s;
    }

  private:
    enum adopt_t { adopt };
    queue(qtbus_queue *q, adopt_t) noexcept : q_(q) {}
    qtbus_queue *q_;
};

/* ---- options ---- */

struct options {
    std::vector<std::string> subtypes; /* none: every event of the type */
    queue *on = nullptr;               /* nullptr: on the dispatching thread */
    int32_t priority = 0;              /* higher first */
    bool once = false;                 /* QTBUS_SUB_ONCE */
    bool replay = false;               /* QTBUS_SUB_REPLAY */
    bool pattern = false;              /* QTBUS_SUB_PATTERN: the type is a pattern ("Order.*") */
};

/* A pattern over dotted type names, NATS's wildcards (QTBUS_SUB_PATTERN in qtbus.h):
 * bus.subscribe(qtbus::pattern("Order.>"), f).  An invalid pattern throws qtbus::error
 * (QTBUS_EINVAL) when subscribed. */
struct pattern {
    explicit pattern(std::string_view text) : text(text) {}
    std::string_view text;
};

/* ---- commands and shared sources ---- */

/* One execution of a command: a copyable handle, valid until finished. */
class execution {
  public:
    explicit execution(qtbus_execution x) noexcept : x_(x) {}
    /* Publishes a value (QTBUS_COMMAND_VALUE_TYPE). */
    void send(std::string_view bytes) const
    {
        detail::check(qtbus_execution_send(x_, detail::bytes(bytes), bytes.size()), "qtbus_execution_send");
    }
    /* Ends the execution successfully. */
    void finish() const { detail::check(qtbus_execution_finish(x_, 0, nullptr), "qtbus_execution_finish"); }
    /* Ends it with an error (non-zero `code`): publishes QTBUS_COMMAND_ERROR_TYPE. */
    void fail(int code, std::string_view message = {}) const
    {
        detail::name text(message, "qtbus_execution_finish", "message");
        detail::check(qtbus_execution_finish(x_, code, text.c_str()), "qtbus_execution_finish");
    }
    qtbus_execution c_execution() const noexcept { return x_; }

  private:
    qtbus_execution x_;
};

/* A command (RACCommand): made by bus_ref::command(); disposed by its destructor. */
class QTBUS_CXX_NODISCARD("a dropped qtbus::command is disposed at once: keep it while it may be executed") command
    : public detail::owned_handle<qtbus_command, qtbus_command_dispose> {
  public:
    command() noexcept = default;
    explicit command(qtbus_command c) noexcept : owned_handle(c) {}

    /* Starts an execution now (on this thread) or on `on`.  Returns false, running
     * nothing, when the command is disabled or busy (QTBUS_EBUSY). */
    QTBUS_CXX_NODISCARD("false: the command is disabled or busy and ran nothing")
    bool execute(queue *on = nullptr) { return run(nullptr, on); }
    /* With an input event of `type` carrying `data` (the execute callable's `input`). */
    QTBUS_CXX_NODISCARD("false: the command is disabled or busy and ran nothing")
    bool execute(std::string_view type, std::string_view data, queue *on = nullptr)
    {
        detail::name t(type, "qtbus_command_execute", "type name");
        qtbus_event_desc d{};
        d.type = t.c_str();
        d.data = detail::bytes(data);
        d.size = data.size();
        return run(&d, on);
    }
    QTBUS_CXX_NODISCARD("false: the command is disabled or busy and ran nothing")
    bool execute(const qtbus_event_desc &input, queue *on = nullptr) { return run(&input, on); }
    void set_enabled(bool enabled)
    {
        detail::check(qtbus_command_set_enabled(h_, enabled ? 1 : 0), "qtbus_command_set_enabled");
    }
    bool executing() const { return detail::check(qtbus_command_is_executing(h_), "qtbus_command_is_executing") == 1; }
    bool enabled() const { return detail::check(qtbus_command_is_enabled(h_), "qtbus_command_is_enabled") == 1; }
    qtbus_command c_command() const noexcept { return h_; }

  private:
    bool run(const qtbus_event_desc *input, queue *on)
    {
        int rc = qtbus_command_execute(h_, input, on ? on->c_queue() : nullptr);
        if (rc == QTBUS_EBUSY) return false;
        detail::check(rc, "qtbus_command_execute");
        return true;
    }
};

/* A shared source (RACMulticastConnection): made by bus_ref::source(); disposed (and
 * stopped if connected) by its destructor. */
class QTBUS_CXX_NODISCARD("a dropped qtbus::source is stopped and disposed at once: keep it") source
    : public detail::owned_handle<qtbus_source, qtbus_source_dispose> {
  public:
    source() noexcept = default;
    explicit source(qtbus_source s) noexcept : owned_handle(s) {}

    void connect() { detail::check(qtbus_source_connect(h_), "qtbus_source_connect"); }
    void disconnect() { detail::check(qtbus_source_disconnect(h_), "qtbus_source_disconnect"); }
    qtbus_source c_source() const noexcept { return h_; }
};

/* ---- buses ---- */

class bus_ref;

namespace detail {

template <class Reply, class Done>
struct request_state {
    Reply reply;
    Done done;
};

template <class Reply, class Done>
void on_reply(const qtbus_event *e, void *userdata) noexcept
{
    try {
        event ev(e);
        call(static_cast<request_state<Reply, Done> *>(userdata)->reply, static_cast<const event &>(ev));
    } catch (...) {
        route_current_exception();
    }
}

/* The request's release hook: its completion, then the callables go. */
template <class Reply, class Done>
void on_complete(void *userdata) noexcept
{
    std::unique_ptr<request_state<Reply, Done>> state(static_cast<request_state<Reply, Done> *>(userdata));
    try {
        if constexpr (!std::is_same_v<Done, std::nullptr_t>) state->done();
    } catch (...) {
        route_current_exception();
    }
}

template <class F>
void execute(const qtbus_event *input, qtbus_execution x, void *userdata) noexcept
{
    try {
        F &f = *static_cast<F *>(userdata);
        execution ex(x);
        if constexpr (std::is_invocable_v<F &, execution, const event *>) {
            if (input) {
                event in(input);
                f(ex, static_cast<const event *>(&in));
            } else {
                f(ex, static_cast<const event *>(nullptr));
            }
        } else {
            f(ex);
        }
    } catch (...) {
        route_current_exception();
    }
}

template <class Start, class Stop>
struct source_state {
    Start start;
    Stop stop;
};

/* The token of a subscription whose callable ends it itself (qtbus::track): 0 until
 * qtbus_subscribe returns it, `gone` once the callable found its owner gone.  Whoever
 * comes second (the callable, which may run on another thread or in a replay before
 * qtbus_subscribe returns, or the subscribing call) disposes the token. */
struct track_cell {
    static constexpr uint64_t gone = UINT64_MAX;
    std::atomic<uint64_t> token{0};

    /* The callable's side: its owner is gone. */
    void expire() noexcept
    {
        const uint64_t t = token.exchange(gone);
        if (t != 0 && t != gone) qtbus_token_dispose(qtbus_token{t});
    }
    /* The subscribing call's side, once it has the token. */
    void bind(qtbus_token t) noexcept
    {
        if (token.exchange(t.id) == gone) qtbus_token_dispose(t);
    }
};

/* The track_cell of a callable that has one (qtbus_tracking_cell()), else nullptr. */
template <class H, class = void>
struct has_tracking_cell : std::false_type {
};
template <class H>
struct has_tracking_cell<H, std::void_t<decltype(std::declval<H &>().qtbus_tracking_cell())>> : std::true_type {
};
template <class H>
std::shared_ptr<track_cell> tracking_cell_of(H &h)
{
    if constexpr (has_tracking_cell<H>::value) {
        return h.qtbus_tracking_cell();
    } else {
        (void)h;
        return nullptr;
    }
}

/* Subscribes `fn(event, held)` to `type` with options `o` on `b`, the subscription
 * owning `held` (destroyed by its release hook).  bus_ref::subscribe and
 * signal::connect. */
template <class H>
subscription subscribe_with(qtbus_bus *b, std::string_view type, const options &o, qtbus_handler fn,
                            std::unique_ptr<H> held)
{
    detail::name t(type, "qtbus_subscribe", "type name", b);
    std::vector<const char *> subtypes;
    subtypes.reserve(o.subtypes.size());
    for (const std::string &s : o.subtypes) {
        detail::check_no_nul(s, "qtbus_subscribe", "subtype", b);
        subtypes.push_back(s.c_str());
    }
    qtbus_sub_options co{};
    co.subtypes = subtypes.empty() ? nullptr : subtypes.data();
    co.subtype_count = subtypes.size();
    co.queue = o.on ? o.on->c_queue() : nullptr;
    co.priority = o.priority;
    co.flags =
        (o.once ? QTBUS_SUB_ONCE : 0u) | (o.replay ? QTBUS_SUB_REPLAY : 0u) | (o.pattern ? QTBUS_SUB_PATTERN : 0u);
    // Taken now: once subscribed, the callable may run (and end) on another thread.  A
    // tracked callable whose owner is gone already is subscribed and disposed at once
    // (the subscription returned has ended), as Boost.Signals2 connects a slot whose
    // tracked object has expired.
    std::shared_ptr<track_cell> cell = tracking_cell_of(*held);
    bool expired = false;
    if constexpr (has_tracking_cell<H>::value) expired = held->qtbus_tracking_expired();
    qtbus_token token{0};
    // On failure the release hook is not called: `held` destroys the callable.
    detail::check(qtbus_subscribe(b, t.c_str(), &co, fn, held.get(), &detail::destroy<H>, &token), "qtbus_subscribe");
    held.release();
    if (cell) {
        cell->bind(token);
        if (expired) cell->expire();
    }
    return subscription(token);
}

} // namespace detail

/* A bus this object does not own: qtbus::shared(), a qtbus::bus, or a qtbus_bus * from
 * C code.  Copyable. */
class bus_ref {
  public:
    explicit bus_ref(qtbus_bus *b) noexcept : b_(b) {}

    template <class F>
    QTBUS_CXX_NODISCARD("dropping the subscription disposes it at once (its handler never runs): keep it, "
                        "move it into a qtbus::bag, or call .release() to let it live on")
    subscription subscribe(std::string_view type, F &&handler)
    {
        return subscribe(type, options{}, std::forward<F>(handler));
    }

    /* Subscribes to every type the pattern matches (options.pattern set). */
    template <class F>
    QTBUS_CXX_NODISCARD("dropping the subscription disposes it at once (its handler never runs): keep it, "
                        "move it into a qtbus::bag, or call .release() to let it live on")
    subscription subscribe(const pattern &p, F &&handler)
    {
        return subscribe(p, options{}, std::forward<F>(handler));
    }

    template <class F>
    QTBUS_CXX_NODISCARD("dropping the subscription disposes it at once (its handler never runs): keep it, "
                        "move it into a qtbus::bag, or call .release() to let it live on")
    subscription subscribe(const pattern &p, options o, F &&handler)
    {
        o.pattern = true;
        return subscribe(p.text, o, std::forward<F>(handler));
    }

    template <class F>
    QTBUS_CXX_NODISCARD("dropping the subscription disposes it at once (its handler never runs): keep it, "
                        "move it into a qtbus::bag, or call .release() to let it live on")
    subscription subscribe(std::string_view type, const options &o, F &&handler)
    {
        using H = std::decay_t<F>;
        static_assert(std::is_invocable_v<H &, const event &> || std::is_invocable_v<H &>,
                      "qtbus: a handler takes const qtbus::event & or nothing");
        return detail::subscribe_with(b_, type, o, &detail::handle<H>, std::make_unique<H>(std::forward<F>(handler)));
    }

    /* Dispatch: returns how many subscriptions were reached; throws on failure. */
    int dispatch(const char *type, std::string_view data = {})
    {
        qtbus_event_desc d{};
        d.type = type;
        d.data = detail::bytes(data);
        d.size = data.size();
        return detail::check(qtbus_dispatch(b_, &d), "qtbus_dispatch");
    }
    int dispatch(std::string_view type, std::string_view data = {})
    {
        detail::name t(type, "qtbus_dispatch", "type name", b_);
        return dispatch(t.c_str(), data);
    }
    int dispatch(std::string_view type, std::string_view subtype, std::string_view data)
    {
        detail::name t(type, "qtbus_dispatch", "type name", b_), s(subtype, "qtbus_dispatch", "subtype", b_);
        qtbus_event_desc d{};
        d.type = t.c_str();
        d.subtype = s.c_str();
        d.data = detail::bytes(data);
        d.size = data.size();
        return detail::check(qtbus_dispatch(b_, &d), "qtbus_dispatch");
    }
    int dispatch(const qtbus_event_desc &desc) { return detail::check(qtbus_dispatch(b_, &desc), "qtbus_dispatch"); }
    /* The same with headers (qtbus.h, "Event headers"). */
    int dispatch(std::string_view type, std::string_view data, const qtbus::headers &h)
    {
        detail::name t(type, "qtbus_dispatch", "type name", b_);
        qtbus_event_desc d{};
        d.type = t.c_str();
        d.data = detail::bytes(data);
        d.size = data.size();
        std::vector<qtbus_header> c;
        h.fill(d, c, "qtbus_dispatch", b_);
        return detail::check(qtbus_dispatch(b_, &d), "qtbus_dispatch");
    }
    int dispatch(std::string_view type, std::string_view subtype, std::string_view data, const qtbus::headers &h)
    {
        detail::name t(type, "qtbus_dispatch", "type name", b_), s(subtype, "qtbus_dispatch", "subtype", b_);
        qtbus_event_desc d{};
        d.type = t.c_str();
        d.subtype = s.c_str();
        d.data = detail::bytes(data);
        d.size = data.size();
        std::vector<qtbus_header> c;
        h.fill(d, c, "qtbus_dispatch", b_);
        return detail::check(qtbus_dispatch(b_, &d), "qtbus_dispatch");
    }

    /* Type ids, for hot loops (qtbus.h): look the type up once, dispatch by id. */
    qtbus_type_id type_id(std::string_view type)
    {
        detail::name t(type, "qtbus_type_lookup", "type name", b_);
        qtbus_type_id id{0};
        detail::check(qtbus_type_lookup(b_, t.c_str(), &id), "qtbus_type_lookup");
        return id;
    }
    int dispatch(qtbus_type_id type, std::string_view data = {})
    {
        qtbus_event_desc d{};
        d.data = detail::bytes(data);
        d.size = data.size();
        return detail::check(qtbus_dispatch_id(b_, type, &d), "qtbus_dispatch_id");
    }

    /* A request: `on_reply(const event &)` runs once per reply, on the replying thread;
     * returns how many handlers were reached.  The overload with `on_complete()` calls
     * it once every handler that received the request has returned. */
    template <class F>
    int request(std::string_view type, std::string_view data, F &&on_reply)
    {
        return request(type, data, std::forward<F>(on_reply), nullptr);
    }
    template <class F, class C, std::enable_if_t<!std::is_same_v<std::decay_t<F>, qtbus::headers>, int> = 0>
    int request(std::string_view type, std::string_view data, F &&on_reply, C &&on_complete)
    {
        detail::name t(type, "qtbus_request", "type name", b_);
        qtbus_event_desc d{};
        d.type = t.c_str();
        d.data = detail::bytes(data);
        d.size = data.size();
        return request(d, std::forward<F>(on_reply), std::forward<C>(on_complete));
    }
    /* The same with headers (qtbus.h, "Event headers"); the replies carry none. */
    template <class F>
    int request(std::string_view type, std::string_view data, const qtbus::headers &h, F &&on_reply)
    {
        return request(type, data, h, std::forward<F>(on_reply), nullptr);
    }
    template <class F, class C>
    int request(std::string_view type, std::string_view data, const qtbus::headers &h, F &&on_reply, C &&on_complete)
    {
        detail::name t(type, "qtbus_request", "type name", b_);
        qtbus_event_desc d{};
        d.type = t.c_str();
        d.data = detail::bytes(data);
        d.size = data.size();
        std::vector<qtbus_header> c;
        h.fill(d, c, "qtbus_request", b_);
        return request(d, std::forward<F>(on_reply), std::forward<C>(on_complete));
    }
    template <class F, class C = std::nullptr_t>
    int request(const qtbus_event_desc &desc, F &&on_reply, C &&on_complete = nullptr)
    {
        using R = std::decay_t<F>;
        using D = std::decay_t<C>;
        static_assert(std::is_invocable_v<R &, const event &> || std::is_invocable_v<R &>,
                      "qtbus: a reply callable takes const qtbus::event & or nothing");
        static_assert(std::is_same_v<D, std::nullptr_t> || std::is_invocable_v<D &>,
                      "qtbus: a completion callable takes nothing");
        auto state = std::make_unique<detail::request_state<R, D>>(
            detail::request_state<R, D>{std::forward<F>(on_reply), std::forward<C>(on_complete)});
        int rc =
            detail::check(qtbus_request(b_, &desc, &detail::on_reply<R, D>, state.get(), &detail::on_complete<R, D>),
                          "qtbus_request");
        state.release();
        return rc;
    }

    /* Waits until no delivery of the bus is waiting or running on any queue, posted
     * dispatches included (qtbus_bus_wait_idle, whose rules hold: on the main thread it
     * runs the main queue's work meanwhile).  True when the bus is idle, false when
     * `timeout` passed first (negative: no limit; zero: only looks).  Throws
     * qtbus::error: QTBUS_EINVAL from inside a handler, QTBUS_ECLOSED. */
    bool wait_idle(std::chrono::milliseconds timeout) const
    {
        const auto ms = timeout.count();
        const int t = ms < 0 ? -1 : ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
        const int rc = qtbus_bus_wait_idle(b_, t);
        if (rc == QTBUS_ETIMEDOUT) return false;
        detail::check(rc, "qtbus_bus_wait_idle");
        return true;
    }

    int subscriber_count(std::string_view type) const
    {
        detail::name t(type, "qtbus_subscriber_count", "type name", b_);
        return detail::check(qtbus_subscriber_count(b_, t.c_str(), nullptr), "qtbus_subscriber_count");
    }
    int subscriber_count(std::string_view type, std::string_view subtype) const
    {
        detail::name t(type, "qtbus_subscriber_count", "type name", b_),
            s(subtype, "qtbus_subscriber_count", "subtype", b_);
        return detail::check(qtbus_subscriber_count(b_, t.c_str(), s.c_str()), "qtbus_subscriber_count");
    }

    /* A command named `name`: `execute(qtbus::execution x, const qtbus::event *input)`
     * (input nullptr when none; a callable taking only the execution is accepted) sends
     * values and finishes `x`, now or later.  `concurrent`: executions may overlap. */
    template <class F>
    QTBUS_CXX_NODISCARD("dropping the command disposes it at once: keep the qtbus::command while it may be executed")
    qtbus::command command(std::string_view name, F &&execute, bool concurrent = false)
    {
        using E = std::decay_t<F>;
        static_assert(
            std::is_invocable_v<E &, execution, const event *> || std::is_invocable_v<E &, execution>,
            "qtbus: an execute callable takes (qtbus::execution, const qtbus::event *) or (qtbus::execution)");
        detail::name n(name, "qtbus_command_create", "name", b_);
        auto held = std::make_unique<E>(std::forward<F>(execute));
        qtbus_command c{0};
        detail::check(qtbus_command_create(b_, n.c_str(), concurrent ? QTBUS_COMMAND_CONCURRENT : 0u,
                                           &detail::execute<E>, held.get(), &detail::destroy<E>, &c),
                      "qtbus_command_create");
        held.release();
        return qtbus::command(c);
    }

    /* A shared source of events of `type`: `start(qtbus::bus_ref)` when it connects,
     * `stop()` when it disconnects.  `autoconnect`: it follows the type's subscribers. */
    template <class Start, class Stop>
    QTBUS_CXX_NODISCARD("dropping the source stops and disposes it at once: keep the qtbus::source")
    qtbus::source source(std::string_view type, Start &&start, Stop &&stop, bool autoconnect = false)
    {
        using S = detail::source_state<std::decay_t<Start>, std::decay_t<Stop>>;
        detail::name t(type, "qtbus_source_create", "type name", b_);
        auto held = std::make_unique<S>(S{std::forward<Start>(start), std::forward<Stop>(stop)});
        qtbus_source s{0};
        detail::check(qtbus_source_create(b_, t.c_str(), autoconnect ? QTBUS_SOURCE_AUTOCONNECT : 0u, &source_start<S>,
                                          &source_stop<S>, held.get(), &detail::destroy<S>, &s),
                      "qtbus_source_create");
        held.release();
        return qtbus::source(s);
    }

    qtbus_bus *c_bus() const noexcept { return b_; }

  protected:
    qtbus_bus *b_;

  private:
    template <class S>
    static void source_start(qtbus_bus *b, void *userdata) noexcept
    {
        try {
            detail::call(static_cast<S *>(userdata)->start, bus_ref(b));
        } catch (...) {
            detail::route_current_exception();
        }
    }
    template <class S>
    static void source_stop(void *userdata) noexcept
    {
        try {
            static_cast<S *>(userdata)->stop();
        } catch (...) {
            detail::route_current_exception();
        }
    }
};

/* A bus of its own (qtbus_bus_create), destroyed with this object: its subscriptions,
 * commands and sources are disposed then (their callables destroyed per rule 1), so a
 * qtbus::subscription that outlives it only holds a stale token.  Move-only. */
class QTBUS_CXX_NODISCARD("a dropped qtbus::bus is destroyed at once, with its subscriptions: keep it") bus
    : public bus_ref {
  public:
    bus() : bus_ref(qtbus_bus_create())
    {
        if (!b_) throw detail::failure(QTBUS_ENOMEM, "qtbus_bus_create");
    }
    bus(bus &&o) noexcept : bus_ref(o.b_) { o.b_ = nullptr; }
    bus &operator=(bus &&o) noexcept
    {
        if (this != &o) {
            if (b_) qtbus_bus_destroy(b_);
            b_ = o.b_;
            o.b_ = nullptr;
        }
        return *this;
    }
    bus(const bus &) = delete;
    bus &operator=(const bus &) = delete;
    ~bus()
    {
        if (b_) qtbus_bus_destroy(b_);
    }
};

/* The process-wide bus. */
inline bus_ref shared() noexcept { return bus_ref(qtbus_shared()); }

/* ---- owner tracking ---- */

/* A callable that runs `f` only while `owner` lives (qtbus::track): see RULES.
 * Move-only: it belongs to one subscription. */
template <class T, class F>
class tracked {
  public:
    /* A tracked callable given a tracked callable (two owners, or more) shares its
     * cell: whichever owner goes first ends the one subscription. */
    tracked(std::weak_ptr<T> owner, F f)
        : owner_(std::move(owner)), f_(std::move(f)),
          cell_(detail::has_tracking_cell<F>::value ? detail::tracking_cell_of(f_)
                                                    : std::make_shared<detail::track_cell>())
    {
    }
    tracked(tracked &&) = default;
    tracked &operator=(tracked &&) = default;
    tracked(const tracked &) = delete;
    tracked &operator=(const tracked &) = delete;

    /* f(args...) with the owner locked; once the owner is gone, never: the call
     * disposes the subscription instead.  What `f` returns is dropped. */
    template <class... A, class = std::enable_if_t<std::is_invocable_v<F &, A...>>>
    void operator()(A &&...args)
    {
        run([&](F &f) { (void)f(std::forward<A>(args)...); });
    }

    /* `call(f)` with the owner locked, or the expiry (signal::connect's path). */
    template <class Call>
    void run(Call &&call)
    {
        if (const std::shared_ptr<T> locked = owner_.lock()) {
            call(f_);
            return;
        }
        cell_->expire();
    }

    const std::shared_ptr<detail::track_cell> &qtbus_tracking_cell() const noexcept { return cell_; }
    /* Whether an owner is gone already (this one's or an inner tracked callable's). */
    bool qtbus_tracking_expired() const noexcept
    {
        if constexpr (detail::has_tracking_cell<F>::value) {
            if (f_.qtbus_tracking_expired()) return true;
        }
        return owner_.expired();
    }

  private:
    std::weak_ptr<T> owner_;
    F f_;
    std::shared_ptr<detail::track_cell> cell_;
};

template <class T, class F>
tracked<T, std::decay_t<F>> track(std::weak_ptr<T> owner, F &&f)
{
    return tracked<T, std::decay_t<F>>(std::move(owner), std::forward<F>(f));
}
template <class T, class F>
tracked<T, std::decay_t<F>> track(const std::shared_ptr<T> &owner, F &&f)
{
    return tracked<T, std::decay_t<F>>(std::weak_ptr<T>(owner), std::forward<F>(f));
}

} // namespace qtbus

/* Typed signals: after everything they use, before the macro they use is undefined. */
#include <qtbus_signal.hpp>

#undef QTBUS_CXX_NODISCARD

#endif /* QTBUS_HPP */
