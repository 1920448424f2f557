// SPDX-License-Identifier: MIT
/*
 * qtbus_signal.hpp -- typed signals in C++ (qtbus::signal): qtbus.h's "Typed signals"
 * as C++ values, packed at compile time.  Part of qtbus.hpp, which includes this file
 * at its end: `#include <qtbus.hpp>` gives typed signals, and including this file
 * alone gives the whole of qtbus.hpp.  A file of its own because it is most of the
 * header's template machinery, which most of its readers never need.  RULES below means
 * qtbus.hpp's RULES, which this section continues.
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
 *     with qtbus_signal_check, the library's reader, which qtbus_event_args uses too
 *     (a slot of this header's own emit skips it: it reads what it packed): bytes that
 *     are not this signature's (a plain dispatch of the type) skip the slot, as they
 *     skip qtbus_signal_connect's handlers.
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
 */
/* qtbus.hpp first: it includes this file at its end, once its own definitions (and the
 * QTBUS_CXX_NODISCARD macro this file uses) are in place, so the guard comes after. */
#include <qtbus.hpp>

#ifndef QTBUS_SIGNAL_HPP
#define QTBUS_SIGNAL_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace qtbus {

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
template <>
struct signal_kind<int32_t> : signal_kind_is<int32_t, QTBUS_ARG_INT32> {
};
template <>
struct signal_kind<uint32_t> : signal_kind_is<uint32_t, QTBUS_ARG_UINT32> {
};
template <>
struct signal_kind<int64_t> : signal_kind_is<int64_t, QTBUS_ARG_INT64> {
};
template <>
struct signal_kind<uint64_t> : signal_kind_is<uint64_t, QTBUS_ARG_UINT64> {
};
template <>
struct signal_kind<double> : signal_kind_is<double, QTBUS_ARG_DOUBLE> {
};
template <>
struct signal_kind<std::string_view> : signal_kind_is<std::string_view, QTBUS_ARG_STRING> {
};
template <>
struct signal_kind<const char *> : signal_kind_is<const char *, QTBUS_ARG_STRING> {
};
template <>
struct signal_kind<std::string> : signal_kind_is<std::string, QTBUS_ARG_STRING> {
};
/* Any object pointer but char * (a string or bytes? say which: const char * or void *). */
template <class T>
struct signal_kind<T *, std::enable_if_t<!std::is_function_v<T> && !std::is_same_v<T, char>>>
    : signal_kind_is<T *, QTBUS_ARG_POINTER> {
};

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
#define QTBUS_CXX_MEMBER_PARAMS(qualifiers)                                                                            \
    template <class R, class C, class... P>                                                                            \
    struct member_params<R (C::*)(P...) qualifiers> {                                                                  \
        static constexpr bool known = true;                                                                            \
        using params = type_list<P...>;                                                                                \
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
struct slot_params<F, std::void_t<decltype(&F::operator())>> : member_params<decltype(&F::operator())> {
};

/* Whether F & can be called with the types of List. */
template <class F, class List>
struct invocable_with;
template <class F, class... T>
struct invocable_with<F, type_list<T...>> : std::is_invocable<F &, T...> {
};

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
        for (std::size_t i = 0; i < count; i++)
            h[8 + i] = kinds[i];
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
    /* emit with headers (qtbus.h, "Event headers"): the slots' events carry them. */
    int emit(const qtbus::headers &h, detail::emit_param_t<Args>... args)
    {
        std::vector<qtbus_header> c;
        qtbus_event_desc d{};
        h.fill(d, c, "qtbus_dispatch_id", bus_.c_bus());
        return send_with(&d, nullptr, args...);
    }

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
    int pack_and_send(const qtbus_event_desc *with, const char *subtype, const detail::emit_param_t<Args> &...args,
                      std::index_sequence<I...>)
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
        qtbus_event_desc d = with ? *with : qtbus_event_desc{};
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
        return pack_and_send(nullptr, subtype, args..., std::index_sequence_for<Args...>());
    }
    /* `with`: a desc holding the headers (and nothing else) to send them with. */
    int send_with(const qtbus_event_desc *with, const char *subtype, const detail::emit_param_t<Args> &...args)
    {
        return pack_and_send(with, subtype, args..., std::index_sequence_for<Args...>());
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
        (void)g(detail::slot_arg<detail::at_t<I, args_list>, detail::at_t<I, Params>>(bytes, bytes + layout::slots_at +
                                                                                                 8 * I)...);
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

#endif /* QTBUS_SIGNAL_HPP */
