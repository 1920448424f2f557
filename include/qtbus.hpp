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
 * TYPED SIGNALS (qtbus::signal; qtbus.h's "Typed signals" in C++)
 *     qtbus::signal<void(std::string_view, int32_t)> login(bus, "Login");
 *     qtbus::subscription s = login.connect([](std::string_view user, int32_t tries) { ... });
 *     login("alice", 3);   // or login.emit("alice", 3), login.emit_subtype("web", "alice", 3)
 *   - The constructor defines the signature of the type on the bus
 *     (qtbus_signal_define), or checks the one it has, whoever defined it (C, Swift,
 *     another qtbus::signal): another one throws qtbus::error (QTBUS_EINVAL).  A signal
 *     object owns nothing and may be copied: it names a type on a bus.  Its slots are
 *     subscriptions and live as long as those (unlike Boost.Signals2's, which end with
 *     the signal object).
 *   - Args are the kinds of qtbus.h: int32_t, uint32_t, int64_t, uint64_t, double, a
 *     string as std::string_view, const char * or std::string (all three are
 *     QTBUS_ARG_STRING: one signature), and a pointer T * (QTBUS_ARG_POINTER; char * is
 *     refused: a string is const char *, bytes void *), by value, 0 to 16 of them.
 *     Any other type (float, bool, long long, a reference, a class) does not compile:
 *     a static_assert names the allowed ones.
 *   - A slot takes the arguments, all of them or the first N (N may be 0: Qt's rule;
 *     what boost::bind or sigc::hide would do for a slot wanting fewer), each as the
 *     argument's own type: by value, const & or &&, with no conversion (an int32_t is
 *     not taken as an int64_t or a double, as a C handler could not take it either),
 *     a string as any of std::string_view, const char * and std::string, a T * as T *
 *     or const T *.  A non-const lvalue reference is refused (the slot would change
 *     its own copy).  A slot with one call operator (a lambda, a function pointer, a
 *     std::function, a qtbus::signal, which forwards) is checked parameter by
 *     parameter; a generic lambda or an overloaded one gets the declared types, as
 *     many leading ones as it takes.  A slot that does not fit does not compile (a
 *     static_assert).  What a slot returns is dropped.
 *   - The events are C's: the arguments are packed at compile time in qtbus.h's
 *     layout (no libffi on this path), so C handlers connected with
 *     qtbus_signal_connect, plain handlers reading qtbus_event_args, Swift's
 *     on(named:) (signalArguments) and this signal's slots all receive one emission,
 *     whichever language made it.  A slot reads the event's bytes after checking them
 *     as qtbus_event_args does: bytes that are not this signature's (a plain dispatch
 *     of the type) skip the slot, as they skip qtbus_signal_connect's handlers.
 *   - Strings are copied into the event (on the emitter's stack up to 512 bytes of
 *     arguments, and once more for a queued delivery); a slot's std::string_view or
 *     const char * is valid during its call.  A null const char * stays NULL: nullptr
 *     to a const char * parameter, empty to the other two.  A std::string_view or
 *     std::string holding a NUL byte cannot be a C string: emit throws qtbus::error
 *     (QTBUS_EINVAL) and sends nothing.
 *   - emit, emit_subtype and operator() dispatch as qtbus_dispatch does (by the type's
 *     id, qtbus_dispatch_id) and return what it returns, the subscriptions reached;
 *     a failure throws qtbus::error.  connect takes qtbus::options as subscribe does
 *     (subtypes, queue, priority, once, replay), but not a pattern (QTBUS_EINVAL).
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
                          "or call .release()")
    subscription : public detail::owned_handle<qtbus_token, qtbus_token_dispose> {
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
                          "have replied")
    deferred_reply : public detail::owned_handle<qtbus_deferred, qtbus_deferred_finish> {
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
class QTBUS_CXX_NODISCARD("a dropped qtbus::bag disposes what it holds at once: keep it")
    bag : public detail::owned_handle<qtbus_bag, qtbus_bag_dispose> {
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
class QTBUS_CXX_NODISCARD("a dropped qtbus::command is disposed at once: keep it while it may be executed")
    command : public detail::owned_handle<qtbus_command, qtbus_command_dispose> {
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
class QTBUS_CXX_NODISCARD("a dropped qtbus::source is stopped and disposed at once: keep it")
    source : public detail::owned_handle<qtbus_source, qtbus_source_dispose> {
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
struct has_tracking_cell : std::false_type {};
template <class H>
struct has_tracking_cell<H, std::void_t<decltype(std::declval<H &>().qtbus_tracking_cell())>> : std::true_type {};
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
    co.flags = (o.once ? QTBUS_SUB_ONCE : 0u) | (o.replay ? QTBUS_SUB_REPLAY : 0u) |
               (o.pattern ? QTBUS_SUB_PATTERN : 0u);
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
    template <class F, class C>
    int request(std::string_view type, std::string_view data, F &&on_reply, C &&on_complete)
    {
        detail::name t(type, "qtbus_request", "type name", b_);
        qtbus_event_desc d{};
        d.type = t.c_str();
        d.data = detail::bytes(data);
        d.size = data.size();
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
        int rc = detail::check(qtbus_request(b_, &desc, &detail::on_reply<R, D>, state.get(), &detail::on_complete<R, D>),
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
        static_assert(std::is_invocable_v<E &, execution, const event *> || std::is_invocable_v<E &, execution>,
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
        detail::check(qtbus_source_create(b_, t.c_str(), autoconnect ? QTBUS_SOURCE_AUTOCONNECT : 0u,
                                          &source_start<S>, &source_stop<S>, held.get(), &detail::destroy<S>, &s),
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
class QTBUS_CXX_NODISCARD("a dropped qtbus::bus is destroyed at once, with its subscriptions: keep it")
    bus : public bus_ref {
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

/* ---- typed signals ---- */

namespace detail {

template <class... T>
struct type_list {
    static constexpr std::size_t size = sizeof...(T);
};

template <std::size_t I, class List>
struct at;
template <class T0, class... T>
struct at<0, type_list<T0, T...>> {
    using type = T0;
};
template <std::size_t I, class T0, class... T>
struct at<I, type_list<T0, T...>> {
    using type = typename at<I - 1, type_list<T...>>::type;
};
template <std::size_t I, class List>
using at_t = typename at<I, List>::type;

/* The first N types of a list. */
template <class List, class Indices>
struct take_impl;
template <class List, std::size_t... I>
struct take_impl<List, std::index_sequence<I...>> {
    using type = type_list<at_t<I, List>...>;
};
template <std::size_t N, class List>
using take_t = typename take_impl<List, std::make_index_sequence<N>>::type;

template <class T>
using remove_cvref_t = std::remove_cv_t<std::remove_reference_t<T>>;

template <class T, class... U>
constexpr bool is_one_of = (std::is_same_v<T, U> || ...);

/* The C kind of a signal argument type; `ok` is false for any other type. */
template <class T, class = void>
struct signal_kind {
    static constexpr bool ok = false;
    static constexpr uint8_t kind = 0;
};
template <class T, uint8_t K>
struct signal_kind_is {
    static constexpr bool ok = true;
    static constexpr uint8_t kind = K;
};
template <> struct signal_kind<int32_t> : signal_kind_is<int32_t, QTBUS_ARG_INT32> {};
template <> struct signal_kind<uint32_t> : signal_kind_is<uint32_t, QTBUS_ARG_UINT32> {};
template <> struct signal_kind<int64_t> : signal_kind_is<int64_t, QTBUS_ARG_INT64> {};
template <> struct signal_kind<uint64_t> : signal_kind_is<uint64_t, QTBUS_ARG_UINT64> {};
template <> struct signal_kind<double> : signal_kind_is<double, QTBUS_ARG_DOUBLE> {};
template <> struct signal_kind<std::string_view> : signal_kind_is<std::string_view, QTBUS_ARG_STRING> {};
template <> struct signal_kind<const char *> : signal_kind_is<const char *, QTBUS_ARG_STRING> {};
template <> struct signal_kind<std::string> : signal_kind_is<std::string, QTBUS_ARG_STRING> {};
/* Any object pointer but char * (a string or bytes? say which: const char * or void *). */
template <class T>
struct signal_kind<T *, std::enable_if_t<!std::is_function_v<T> && !std::is_same_v<T, char>>>
    : signal_kind_is<T *, QTBUS_ARG_POINTER> {};

/* What emit takes for an argument of type T: a std::string as a std::string_view (the
 * bytes are copied into the event either way). */
template <class T>
struct emit_param {
    using type = T;
};
template <>
struct emit_param<std::string> {
    using type = std::string_view;
};
template <class T>
using emit_param_t = typename emit_param<T>::type;

/* Whether a slot parameter of type P takes a signal argument of type Arg (RULES: exactly
 * the argument's type, by value, const & or &&; a string as any of the three; a T * as
 * T * or const T *). */
template <class Arg, class P>
constexpr bool slot_param_takes()
{
    using D = remove_cvref_t<P>;
    if constexpr (std::is_lvalue_reference_v<P> && !std::is_const_v<std::remove_reference_t<P>>) {
        return false; // the value is the slot's copy, not the emitter's variable
    } else if constexpr (signal_kind<Arg>::kind == QTBUS_ARG_STRING) {
        return is_one_of<D, std::string_view, const char *, std::string>;
    } else if constexpr (signal_kind<Arg>::kind == QTBUS_ARG_POINTER) {
        return is_one_of<D, Arg, std::add_pointer_t<std::add_const_t<std::remove_pointer_t<Arg>>>>;
    } else {
        return std::is_same_v<D, Arg>;
    }
}

/* The parameter list of a callable whose call operator is not overloaded or a template
 * (a lambda, a function pointer, std::function...): `known`. */
template <class M>
struct member_params {
    static constexpr bool known = false;
};
#define QTBUS_CXX_MEMBER_PARAMS(qualifiers)                                                                        \
    template <class R, class C, class... P>                                                                        \
    struct member_params<R (C::*)(P...) qualifiers> {                                                              \
        static constexpr bool known = true;                                                                        \
        using params = type_list<P...>;                                                                            \
    };
QTBUS_CXX_MEMBER_PARAMS()
QTBUS_CXX_MEMBER_PARAMS(const)
QTBUS_CXX_MEMBER_PARAMS(noexcept)
QTBUS_CXX_MEMBER_PARAMS(const noexcept)
#undef QTBUS_CXX_MEMBER_PARAMS
template <class F, class = void>
struct slot_params {
    static constexpr bool known = false;
};
template <class R, class... P>
struct slot_params<R (*)(P...)> {
    static constexpr bool known = true;
    using params = type_list<P...>;
};
template <class R, class... P>
struct slot_params<R (*)(P...) noexcept> {
    static constexpr bool known = true;
    using params = type_list<P...>;
};
template <class F>
struct slot_params<F, std::void_t<decltype(&F::operator())>> : member_params<decltype(&F::operator())> {};

/* Whether F & can be called with the types of List. */
template <class F, class List>
struct invocable_with;
template <class F, class... T>
struct invocable_with<F, type_list<T...>> : std::is_invocable<F &, T...> {};

/* The most leading arguments of Args a callable with no known parameter list (a
 * generic lambda) takes, each as its declared type; -1 when it takes none of them. */
template <class F, class Args, std::size_t N = Args::size>
struct generic_arity {
    static constexpr int value =
        invocable_with<F, take_t<N, Args>>::value ? int(N) : generic_arity<F, Args, N - 1>::value;
};
template <class F, class Args>
struct generic_arity<F, Args, 0> {
    static constexpr int value = invocable_with<F, type_list<>>::value ? 0 : -1;
};

template <class Args, class Params, std::size_t... I>
constexpr bool params_take(std::index_sequence<I...>)
{
    return (slot_param_takes<at_t<I, Args>, at_t<I, Params>>() && ... && true);
}
/* Whether parameters Params take the leading arguments of Args. */
template <class Args, class Params>
constexpr bool params_fit()
{
    if constexpr (Params::size > Args::size) {
        return false;
    } else {
        return params_take<Args, Params>(std::make_index_sequence<Params::size>());
    }
}

/* What signal<void(Args...)>::connect makes of a slot F: the callable that runs
 * (`target`: F, or the callable a qtbus::tracked holds), whether it fits (`ok`), and
 * the parameter types it is called with (`params`: its own, or the leading Args). */
template <class F>
struct slot_target {
    using type = F;
    static constexpr bool tracked = false;
};
template <class T, class G>
struct slot_target<qtbus::tracked<T, G>> {
    using type = G;
    static constexpr bool tracked = true;
};

template <class F, class Args, bool Known = slot_params<F>::known>
struct slot_fit;
template <class F, class Args>
struct slot_fit<F, Args, true> {
    using own = typename slot_params<F>::params;
    static constexpr bool ok = params_fit<Args, own>();
    using params = std::conditional_t<ok, own, type_list<>>;
};
template <class F, class Args>
struct slot_fit<F, Args, false> {
    static constexpr int arity = generic_arity<F, Args>::value;
    static constexpr bool ok = arity >= 0;
    using params = take_t<(arity < 0 ? 0 : std::size_t(arity)), Args>;
};

constexpr std::size_t pad8(std::size_t n) { return (n + 7u) & ~std::size_t(7u); }

/* The packed bytes' fixed part for the kinds K... (qtbus.h's layout): magic, version,
 * count, kinds zero-padded to 8. */
template <uint8_t... K>
struct signal_layout {
    static constexpr std::size_t count = sizeof...(K);
    static constexpr std::size_t slots_at = 8 + pad8(count);
    static constexpr std::size_t fixed = slots_at + 8 * count; // the strings follow
    static constexpr std::array<unsigned char, slots_at> head()
    {
        std::array<unsigned char, slots_at> h{};
        h[0] = 'Q';
        h[1] = 'T';
        h[2] = 'S';
        h[3] = 'G';
        h[4] = QTBUS_SIGNAL_LAYOUT_VERSION;
        h[5] = static_cast<unsigned char>(count);
        const uint8_t kinds[count + 1] = {K..., 0};
        for (std::size_t i = 0; i < count; i++) h[8 + i] = kinds[i];
        return h;
    }
    static constexpr std::array<unsigned char, slots_at> bytes = head();
    static constexpr bool any_string = ((K == QTBUS_ARG_STRING) || ... || false);
};

/* The emit running on this thread (innermost): its bytes, alive and unchanged until its
 * dispatch returns, and its signature's layout.  A slot handed those very bytes skips
 * the check (it is reading what this header packed); any other bytes (a queued copy, a
 * plain dispatch, C's or Swift's emit, another thread's) are checked, as
 * qtbus_signal_connect's handlers do with C's emits.  The first slot that finds the
 * emit's bytes keeps the event it was handed: the engine hands every synchronous
 * handler of a dispatch the same event, which lives as long as the dispatch (so no
 * other event can have its address meanwhile), and the later slots of the emit then
 * skip qtbus_event_data too, a call into the library that costs a delivery about as
 * much as the rest of it (docs/performance.md, "Typed signals in C++").
 * The twin of signals.c's struct emit_frame, which does the same for C's connected
 * handlers: this header packs its own bytes and dispatches them with
 * qtbus_dispatch_id, so the library never sees a C++ emit as one, and a slot needs
 * the bytes, not the prepared libffi call the library's frame holds.  Both keep one
 * rule: skip the check only for the very bytes (address and size) of the innermost
 * emit on this thread, of the slot's own signature.  Change one, change the other. */
struct emit_frame {
    const unsigned char *bytes;
    std::size_t size;
    const void *layout;
    const qtbus_event *event; /* nullptr until a slot found the bytes */
};
inline thread_local emit_frame current_emit{nullptr, 0, nullptr, nullptr};

/* One argument read from validated bytes (a string as its C pointer, NULL included). */
inline qtbus_value read_slot(const unsigned char *slot) noexcept
{
    qtbus_value v;
    std::memcpy(&v, slot, sizeof v);
    return v;
}

/* A slot's parameter of type P from the value of an argument of type Arg. */
template <class Arg, class P>
decltype(auto) slot_arg(const unsigned char *bytes, const unsigned char *slot)
{
    using D = remove_cvref_t<P>;
    const qtbus_value v = read_slot(slot);
    if constexpr (signal_kind<Arg>::kind == QTBUS_ARG_STRING) {
        uint64_t offset;
        std::memcpy(&offset, slot, sizeof offset);
        const char *s = offset ? reinterpret_cast<const char *>(bytes) + offset : nullptr;
        if constexpr (std::is_same_v<D, const char *>) {
            return s;
        } else {
            return s ? D(s) : D();
        }
    } else if constexpr (signal_kind<Arg>::kind == QTBUS_ARG_POINTER) {
        return static_cast<D>(v.ptr);
    } else if constexpr (std::is_same_v<Arg, int32_t>) {
        return v.i32;
    } else if constexpr (std::is_same_v<Arg, uint32_t>) {
        return v.u32;
    } else if constexpr (std::is_same_v<Arg, int64_t>) {
        return v.i64;
    } else if constexpr (std::is_same_v<Arg, uint64_t>) {
        return v.u64;
    } else {
        return v.f64;
    }
}

} // namespace detail

/* A typed signal: events of `type` on a bus whose bytes carry Args (qtbus.h's "Typed
 * signals" layout), emitted and received as C++ values.  See RULES. */
template <class Sig>
class signal;

template <class... Args>
class signal<void(Args...)> {
    static_assert((detail::signal_kind<Args>::ok && ... && true),
                  "qtbus::signal<void(Args...)>: each argument type must be one of int32_t, uint32_t, int64_t, "
                  "uint64_t, double, std::string_view, const char *, std::string, or a pointer T * other than "
                  "char * (qtbus.h's typed signal kinds), by value");
    static_assert(sizeof...(Args) <= QTBUS_SIGNAL_MAX_ARGS,
                  "qtbus::signal<void(Args...)>: at most QTBUS_SIGNAL_MAX_ARGS (16) arguments");
    using args_list = detail::type_list<Args...>;
    using layout = detail::signal_layout<detail::signal_kind<Args>::kind...>;
    static constexpr std::size_t count = sizeof...(Args);
    /* The signature as qtbus_signal_define and qtbus_signal_check take it (one element
     * more: an array may not be empty). */
    static constexpr qtbus_arg c_kinds[count + 1] = {static_cast<qtbus_arg>(detail::signal_kind<Args>::kind)...,
                                                     QTBUS_ARG_INT32};

public:
    static constexpr std::size_t arity = count;

    /* Defines the signature on the bus (qtbus_signal_define), or checks the one it has:
     * another one throws qtbus::error (QTBUS_EINVAL, "qtbus_signal_define: the type has
     * another signature on this bus already"). */
    signal(bus_ref bus, std::string_view type) : bus_(bus), type_(type)
    {
        detail::name t(type, "qtbus_signal_define", "type name", bus_.c_bus());
        detail::check(qtbus_signal_define(bus_.c_bus(), t.c_str(), count ? c_kinds : nullptr, count),
                      "qtbus_signal_define");
        id_ = bus_.type_id(type);
    }

    /* Subscribes `slot` to the signal's events: it is called with the arguments, or the
     * first of them (RULES), on the dispatching thread or the options' queue. */
    template <class F>
    QTBUS_CXX_NODISCARD("dropping the subscription disposes it at once (its slot never runs): keep it, "
                        "move it into a qtbus::bag, or call .release() to let it live on")
    subscription connect(F &&slot)
    {
        return connect(options{}, std::forward<F>(slot));
    }

    template <class F>
    QTBUS_CXX_NODISCARD("dropping the subscription disposes it at once (its slot never runs): keep it, "
                        "move it into a qtbus::bag, or call .release() to let it live on")
    subscription connect(const options &o, F &&slot)
    {
        using H = std::decay_t<F>;
        using target = typename detail::slot_target<H>::type;
        static_assert(detail::slot_fit<target, args_list>::ok,
                      "qtbus::signal<void(Args...)>::connect: the slot must take the signal's arguments, all of "
                      "them or the first ones, each as its own type (by value, const & or &&; a string argument "
                      "as std::string_view, const char * or std::string; a T * as T * or const T *)");
        if constexpr (detail::slot_fit<target, args_list>::ok) {
            if (o.pattern) {
                detail::refuse(bus_.c_bus(), "qtbus_subscribe", QTBUS_EINVAL,
                               "a qtbus::signal connects to its type, not to a pattern (options.pattern)");
            }
            return detail::subscribe_with(bus_.c_bus(), type_, o, &deliver<H>,
                                          std::make_unique<H>(std::forward<F>(slot)));
        } else {
            return subscription();
        }
    }

    /* Emits the arguments: packs them (qtbus.h's layout, on the stack when they fit in
     * 512 bytes) and dispatches them as qtbus_dispatch does.  Returns what
     * qtbus_dispatch returns (the subscriptions reached); throws qtbus::error on a
     * failure, and QTBUS_EINVAL for a std::string_view or std::string argument holding
     * a NUL byte (the strings are NUL-terminated in the event). */
    int emit(detail::emit_param_t<Args>... args) { return send(nullptr, args...); }
    /* The same with a subtype. */
    int emit_subtype(std::string_view subtype, detail::emit_param_t<Args>... args)
    {
        detail::name s(subtype, "qtbus_dispatch_id", "subtype", bus_.c_bus());
        return send(s.c_str(), args...);
    }
    int operator()(detail::emit_param_t<Args>... args) { return send(nullptr, args...); }

    bus_ref bus() const noexcept { return bus_; }
    const std::string &type() const noexcept { return type_; }
    qtbus_type_id type_id() const noexcept { return id_; }

private:
    template <class T>
    static std::size_t string_bytes(const T &v, std::size_t index, qtbus_bus *bus)
    {
        if constexpr (std::is_same_v<T, const char *>) {
            return v ? std::strlen(v) + 1 : 0;
        } else if constexpr (std::is_same_v<T, std::string_view>) {
            const void *nul = v.empty() ? nullptr : std::memchr(v.data(), 0, v.size());
            if (nul) {
                detail::refuse(bus, "qtbus_dispatch_id", QTBUS_EINVAL,
                               "argument " + std::to_string(index + 1) + " " + detail::quoted(v) +
                                   " holds a NUL byte (at byte " +
                                   std::to_string(static_cast<const char *>(nul) - v.data()) + ")");
            }
            return v.size() + 1;
        } else {
            (void)v;
            (void)index;
            (void)bus;
            return 0;
        }
    }

    template <class T>
    static void put(unsigned char *bytes, std::size_t index, std::size_t &next, const T &v)
    {
        unsigned char *slot = bytes + layout::slots_at + 8 * index;
        qtbus_value u;
        u.u64 = 0;
        if constexpr (std::is_same_v<T, const char *> || std::is_same_v<T, std::string_view>) {
            const char *p;
            std::size_t n;
            if constexpr (std::is_same_v<T, const char *>) {
                p = v;
                n = v ? std::strlen(v) : 0;
            } else {
                p = v.data();
                n = v.size();
            }
            if constexpr (std::is_same_v<T, const char *>) {
                if (!p) {
                    std::memcpy(slot, &u, 8);
                    return;
                }
            }
            if (n) std::memcpy(bytes + next, p, n);
            bytes[next + n] = 0;
            u.u64 = next;
            next += n + 1;
        } else if constexpr (std::is_pointer_v<T>) {
            u.ptr = const_cast<void *>(static_cast<const volatile void *>(v));
        } else if constexpr (std::is_same_v<T, int32_t>) {
            u.i32 = v;
        } else if constexpr (std::is_same_v<T, uint32_t>) {
            u.u32 = v;
        } else if constexpr (std::is_same_v<T, int64_t>) {
            u.i64 = v;
        } else if constexpr (std::is_same_v<T, uint64_t>) {
            u.u64 = v;
        } else {
            u.f64 = v;
        }
        std::memcpy(slot, &u, 8);
    }

    template <std::size_t... I>
    int pack_and_send(const char *subtype, const detail::emit_param_t<Args> &...args, std::index_sequence<I...>)
    {
        std::size_t size = layout::fixed;
        if constexpr (layout::any_string) {
            ((size += string_bytes(args, I, bus_.c_bus())), ...);
        }
        constexpr std::size_t stack_bytes = layout::any_string ? 512 : layout::fixed;
        alignas(8) unsigned char stack[stack_bytes > 0 ? stack_bytes : 1];
        std::unique_ptr<unsigned char[]> heap;
        unsigned char *bytes = stack;
        if (layout::any_string && size > stack_bytes) {
            heap.reset(new unsigned char[size]);
            bytes = heap.get();
        }
        std::memcpy(bytes, layout::bytes.data(), layout::slots_at);
        std::size_t next = layout::fixed;
        (put(bytes, I, next, args), ...);
        (void)next;
        qtbus_event_desc d{};
        d.subtype = subtype;
        d.data = bytes;
        d.size = size;
        detail::emit_frame &current = detail::current_emit;
        const detail::emit_frame outer = current;
        current = detail::emit_frame{bytes, size, layout::bytes.data(), nullptr};
        const int rc = qtbus_dispatch_id(bus_.c_bus(), id_, &d); // C: returns, never throws
        current = outer;
        return detail::check(rc, "qtbus_dispatch_id");
    }

    int send(const char *subtype, const detail::emit_param_t<Args> &...args)
    {
        return pack_and_send(subtype, args..., std::index_sequence_for<Args...>());
    }

    /* Whether `bytes` are arguments of this signature: the library's reader decides
     * (qtbus_signal_check, the one qtbus_event_args and C's connected handlers use), so
     * that no copy of it here can come to read differently. */
    static bool valid(const unsigned char *bytes, std::size_t size) noexcept
    {
        return qtbus_signal_check(bytes, size, count ? c_kinds : nullptr, count) == 1;
    }

    template <class G, class Params, std::size_t... I>
    static void call(G &g, const unsigned char *bytes, std::index_sequence<I...>)
    {
        (void)bytes;
        (void)g(detail::slot_arg<detail::at_t<I, args_list>, detail::at_t<I, Params>>(
            bytes, bytes + layout::slots_at + 8 * I)...);
    }

    /* The subscription's handler: the slot, with the event's arguments, when its bytes
     * are this signature's; else nothing (a plain dispatch of the type: as
     * qtbus_signal_connect's handlers, the slot is skipped). */
    template <class H>
    static void deliver(const qtbus_event *e, void *userdata) noexcept
    {
        try {
            detail::emit_frame &current = detail::current_emit;
            const unsigned char *bytes;
            if (e == current.event && current.layout == layout::bytes.data()) {
                bytes = current.bytes; // this emit's, found by an earlier slot
            } else {
                std::size_t size = 0;
                bytes = static_cast<const unsigned char *>(qtbus_event_data(e, &size));
                if (bytes == current.bytes && size == current.size && current.layout == layout::bytes.data()) {
                    current.event = e;
                } else if (!valid(bytes, size)) {
                    return;
                }
            }
            H &h = *static_cast<H *>(userdata);
            using target = typename detail::slot_target<H>::type;
            using params = typename detail::slot_fit<target, args_list>::params;
            if constexpr (detail::slot_target<H>::tracked) {
                h.run([&](target &g) { call<target, params>(g, bytes, std::make_index_sequence<params::size>()); });
            } else {
                call<H, params>(h, bytes, std::make_index_sequence<params::size>());
            }
        } catch (...) {
            detail::route_current_exception();
        }
    }

    bus_ref bus_;
    std::string type_;
    qtbus_type_id id_{0};
};


} // namespace qtbus

#undef QTBUS_CXX_NODISCARD

#endif /* QTBUS_HPP */
