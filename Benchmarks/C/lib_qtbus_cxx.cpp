// SPDX-License-Identifier: MIT
// lib_qtbus_cxx.cpp -- qtbus through its C++ API (qtbus.hpp), the way a C++ user writes
// it: a qtbus::bus, lambdas doing the handlers' work (increment this thread's counter,
// as h_qtbus does for the C column), qtbus::subscription handles kept, the type given
// as a string literal.
#include "bench.h"

#include <qtbus.hpp>

#include <vector>

namespace {
constexpr const char *type = "BenchEvent";

struct Ctx {
    qtbus::bus bus;
    std::vector<qtbus::subscription> subs;
};

void *create() { return new Ctx; }

void reserve(void *s, std::size_t n)
{
    Ctx *c = static_cast<Ctx *>(s);
    c->subs.reserve(n);
}

void connect_n(void *s, std::size_t n)
{
    Ctx *c = static_cast<Ctx *>(s);
    for (std::size_t i = 0; i < n; i++)
        c->subs.push_back(c->bus.subscribe(type, [] { bench_work(); }));
}

void dispatch(void *s, std::uint64_t iters)
{
    Ctx *c = static_cast<Ctx *>(s);
    std::int64_t reached = 0;
    for (std::uint64_t i = 0; i < iters; i++)
        reached += c->bus.dispatch(type);
    if (reached != static_cast<std::int64_t>(iters * c->subs.size()))
        bench_fail("qtbus.hpp: dispatch reported %lld deliveries, expected %llu", static_cast<long long>(reached),
                   static_cast<unsigned long long>(iters * c->subs.size()));
}

void sub_dispose(void *s, std::uint64_t iters)
{
    Ctx *c = static_cast<Ctx *>(s);
    for (std::uint64_t i = 0; i < iters; i++) {
        qtbus::subscription sub = c->bus.subscribe(type, [] { bench_work(); });
        sub.dispose();
    }
}

void destroy(void *s) { delete static_cast<Ctx *>(s); }

const char *version() { return qtbus_version(); }

bench_lib make()
{
    bench_lib lib{};
    lib.key = "qtbus_cxx";
    lib.name = "qtbus.hpp";
    lib.thread_safe = 1;
    lib.create = create;
    lib.reserve = reserve;
    lib.connect_n = connect_n;
    lib.dispatch = dispatch;
    lib.sub_dispose = sub_dispose;
    lib.destroy = destroy;
    lib.version = version;
    return lib;
}
} // namespace

extern "C" const bench_lib bench_qtbus_cxx = make();

// The typed signal case's C++ column: qtbus::signal<void(const char *, int32_t)>, its
// slots the function h_slot (a slot checked parameter by parameter, called with the
// arguments read from the event), kept as qtbus::subscription handles.
namespace {
struct Sig {
    qtbus::bus bus;
    qtbus::signal<void(const char *, int32_t)> sig{bus, "Login"};
    std::vector<qtbus::subscription> subs;
};

void *sig_create(std::size_t handlers)
{
    Sig *s = new Sig;
    for (std::size_t i = 0; i < handlers; i++)
        s->subs.push_back(s->sig.connect(&h_slot));
    return s;
}

std::uint64_t sig_emit(void *p, std::uint64_t n)
{
    Sig *s = static_cast<Sig *>(p);
    std::uint64_t reached = 0;
    for (std::uint64_t i = 0; i < n; i++)
        reached += static_cast<std::uint64_t>(s->sig("alice", static_cast<std::int32_t>(i)));
    return reached;
}

void sig_destroy(void *p) { delete static_cast<Sig *>(p); }
} // namespace

extern "C" const bench_sig_impl bench_sig_qtbus_cxx = {sig_create, sig_emit, sig_destroy};
