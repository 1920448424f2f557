// SPDX-License-Identifier: MIT
// cxx_signal_bytes -- a qtbus::signal slot given bytes it did not pack is called exactly
// when the library's reader, qtbus_signal_check, accepts them for the slot's
// signature (qtbus_signal.hpp: the slot asks it, with the kinds its C++ types map to),
// and the strings it then receives end inside the bytes.
//
// Over generated inputs: for signatures of every kind, declared with every C++ spelling
// of a string (std::string_view, const char *, std::string), bytes packed by an emit
// of the signal, captured by a plain handler, then truncated, extended, overwritten,
// their offsets set to the edges, their count and kinds bent; each dispatched with
// qtbus_dispatch (so no slot takes the emit's skip) from a buffer of exactly its size,
// so that a read past it is an error under ASan and valgrind.
#include "cxx_util.hpp"

#include <cstring>
#include <string>
#include <vector>

namespace {

uint64_t next(uint64_t &state)
{
    uint64_t x = state ? state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

long compared = 0, accepted = 0;

// Where a slot argument points into the bytes, if it does: a string's characters.
template <class T>
const char *as_c(const T &)
{
    return nullptr;
}
const char *as_c(const char *s) { return s; }
const char *as_c(std::string_view s) { return s.empty() ? nullptr : s.data(); }

// Bytes bent at random from `packed`.
std::vector<unsigned char> mutate(const std::vector<unsigned char> &packed, std::size_t count, uint64_t &seed)
{
    std::vector<unsigned char> b = packed;
    const std::size_t slots = 8 + (count + 7) / 8 * 8;
    const int edits = 1 + int(next(seed) % 3);
    for (int e = 0; e < edits; e++) {
        switch (next(seed) % 6) {
        case 0: b.resize(b.empty() ? 0 : std::size_t(next(seed) % b.size())); break;
        case 1:
            while (next(seed) % 8)
                b.push_back(next(seed) % 2 ? 0 : static_cast<unsigned char>(next(seed)));
            break;
        case 2:
            if (!b.empty()) b[next(seed) % b.size()] = static_cast<unsigned char>(next(seed));
            break;
        case 3:
            if (count && b.size() >= slots + 8 * count) {
                const uint64_t edges[] = {
                    0, 1, slots + 8 * count - 1, slots + 8 * count, b.size() - 1, b.size(), b.size() + 1, UINT64_MAX};
                const uint64_t v = edges[next(seed) % (sizeof edges / sizeof edges[0])];
                std::memcpy(b.data() + slots + 8 * (next(seed) % count), &v, 8);
            }
            break;
        case 4:
            if (b.size() > 5) b[5] = static_cast<unsigned char>(next(seed) % 18);
            break;
        default:
            if (count && b.size() > 8 + count) b[8 + next(seed) % count] = static_cast<unsigned char>(next(seed) % 9);
            break;
        }
    }
    return b;
}

// One signature: `emit` sends one emission of `sig`; the slot checks every string it
// receives ends inside the bytes being dispatched.
template <class... Args, class Emit>
void compare_signature(const char *type, const std::vector<qtbus_arg> &kinds, Emit emit, uint64_t &seed)
{
    qtbus::bus bus;
    qtbus::signal<void(Args...)> sig(bus, type);
    std::vector<unsigned char> packed;
    const unsigned char *current = nullptr;
    std::size_t current_size = 0;
    int calls = 0;
    qtbus::subscription capture = bus.subscribe(type, [&](const qtbus::event &e) {
        if (current) return;
        std::size_t n = 0;
        const auto *d = static_cast<const unsigned char *>(qtbus_event_data(e.c_event(), &n));
        packed.assign(d, d + n);
    });
    emit(sig);
    capture.dispose();
    CHECK(!packed.empty());

    auto inside = [&](const char *s) {
        if (!s) return;
        const auto *p = reinterpret_cast<const unsigned char *>(s);
        CHECK(p >= current && p < current + current_size);
        CHECK(std::memchr(p, 0, std::size_t(current + current_size - p)) != nullptr);
    };
    qtbus::subscription slot = sig.connect([&](Args... args) {
        calls++;
        (inside(as_c(args)), ...);
    });

    for (int m = 0; m < 800; m++) {
        const std::vector<unsigned char> b = m == 0 ? packed : mutate(packed, kinds.size(), seed);
        std::unique_ptr<unsigned char[]> copy(new unsigned char[b.empty() ? 1 : b.size()]);
        if (!b.empty()) std::memcpy(copy.get(), b.data(), b.size());
        current = b.empty() ? nullptr : copy.get();
        current_size = b.size();
        const int want = qtbus_signal_check(current, current_size, kinds.data(), kinds.size());
        const int before = calls;
        qtbus_event_desc d{};
        d.type = type;
        d.data = current;
        d.size = current_size;
        (void)bus.dispatch(d);
        if ((calls - before) != want) {
            std::fprintf(stderr, "%s, input %d (%zu bytes): qtbus_signal_check says %d, the slot ran %d times\n", type,
                         m, current_size, want, calls - before);
            std::_Exit(1);
        }
        compared++;
        accepted += want;
    }
    current = nullptr;
}

} // namespace

int main()
{
    uint64_t seed = 0xC0FFEE;
    compare_signature<const char *, int32_t>(
        "TextNumber", {QTBUS_ARG_STRING, QTBUS_ARG_INT32}, [](auto &s) { (void)s("alice", 3); }, seed);
    compare_signature<std::string_view, const char *, double>(
        "TwoTexts", {QTBUS_ARG_STRING, QTBUS_ARG_STRING, QTBUS_ARG_DOUBLE},
        [](auto &s) { (void)s(std::string_view("h\xc3\xa9llo"), nullptr, 2.5); }, seed);
    compare_signature<std::string, uint32_t, int64_t, uint64_t, void *>(
        "Mixed", {QTBUS_ARG_STRING, QTBUS_ARG_UINT32, QTBUS_ARG_INT64, QTBUS_ARG_UINT64, QTBUS_ARG_POINTER},
        [&seed](auto &s) { (void)s(std::string_view("x"), 1u, int64_t(-2), uint64_t(3), &seed); }, seed);
    compare_signature<int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t, int32_t>(
        "Nine", std::vector<qtbus_arg>(9, QTBUS_ARG_INT32), [](auto &s) { (void)s(1, 2, 3, 4, 5, 6, 7, 8, 9); }, seed);
    compare_signature<>(
        "Nothing", {}, [](auto &s) { (void)s(); }, seed);
    CHECK(compared == 5 * 800);
    CHECK(accepted > compared / 20);
    std::printf("cxx_signal_bytes: %ld inputs compared, %ld accepted\n", compared, accepted);
    return 0;
}
