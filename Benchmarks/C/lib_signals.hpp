// SPDX-License-Identifier: MIT
// lib_signals.hpp -- one adapter for the two C++ signal libraries, which differ only in
// how a handler is connected (Traits::connect) and in their version string.
#pragma once

#include "bench.h"

#include <cstddef>
#include <cstdint>
#include <vector>

template <class Traits>
struct SignalAdapter {
    struct Ctx {
        typename Traits::signal_type sig;
        std::vector<typename Traits::connection_type> conns; // handles, default-constructed ahead
        std::size_t n = 0;
    };

    static void *create() { return new Ctx; }

    static void reserve(void *s, std::size_t n)
    {
        Ctx *c = static_cast<Ctx *>(s);
        if (n > c->conns.size()) c->conns.resize(n); // constructs (touches) the handles now, not while measured
    }

    static void connect_n(void *s, std::size_t n)
    {
        Ctx *c = static_cast<Ctx *>(s);
        reserve(c, c->n + n);
        for (std::size_t i = 0; i < n; i++)
            c->conns[c->n++] = Traits::connect(c->sig);
    }

    static void dispatch(void *s, std::uint64_t iters)
    {
        Ctx *c = static_cast<Ctx *>(s);
        for (std::uint64_t i = 0; i < iters; i++)
            c->sig();
    }

    static void sub_dispose(void *s, std::uint64_t iters)
    {
        Ctx *c = static_cast<Ctx *>(s);
        for (std::uint64_t i = 0; i < iters; i++) {
            auto conn = Traits::connect(c->sig);
            conn.disconnect();
        }
    }

    static void destroy(void *s) { delete static_cast<Ctx *>(s); }

    static bench_lib make(const char *key, const char *name, int thread_safe, const char *(*version)())
    {
        bench_lib lib{};
        lib.key = key;
        lib.name = name;
        lib.thread_safe = thread_safe;
        lib.create = create;
        lib.reserve = reserve;
        lib.connect_n = connect_n;
        lib.dispatch = dispatch;
        lib.sub_dispose = sub_dispose;
        lib.destroy = destroy;
        lib.version = version;
        return lib;
    }
};
