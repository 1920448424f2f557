// SPDX-License-Identifier: MIT
// See include/sigpeer.h: the C++ half, through qtbus.hpp as a C++ program uses it.
#include "sigpeer.h"

#include <qtbus.hpp>

#include <mutex>
#include <string>
#include <vector>

namespace {
// The slot takes the text as a std::string_view; the emitter passes a const char *, so
// that a NULL stays NULL: two declarations of one signature (STRING, INT32).
using login_signal = qtbus::signal<void(std::string_view, int32_t)>;
using login_emitter = qtbus::signal<void(const char *, int32_t)>;

std::mutex lock;
std::vector<qtbus::subscription> subscriptions;
} // namespace

int sigpeer_cxx_connect(const char *type)
{
    try {
        login_signal signal(qtbus::shared(), type);
        qtbus::subscription s = signal.connect(
            [](std::string_view text, int32_t number) { sigpeer_record("c++", std::string(text).c_str(), number); });
        std::lock_guard<std::mutex> guard(lock);
        subscriptions.push_back(std::move(s));
        return 0;
    } catch (const qtbus::error &e) {
        return e.status();
    }
}

int sigpeer_cxx_emit(const char *type, const char *subtype, const char *text, int32_t number)
{
    try {
        login_emitter signal(qtbus::shared(), type);
        return subtype ? signal.emit_subtype(subtype, text, number) : signal.emit(text, number);
    } catch (const qtbus::error &e) {
        return e.status();
    }
}

void sigpeer_cxx_stop(void)
{
    std::vector<qtbus::subscription> ending;
    {
        std::lock_guard<std::mutex> guard(lock);
        ending.swap(subscriptions);
    }
}
