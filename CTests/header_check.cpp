// SPDX-License-Identifier: MIT
// header_check.cpp: qtbus.h compiles cleanly as C++17 (-std=c++17 -Wall -Wextra
// -pedantic -Werror) and is usable from C++: extern "C" linkage, the QTBUS_SUB /
// QTBUS_SUB_MAIN / QTBUS_SUB_JSON macros, the handle types (distinct types, so
// overloads on them work), lambdas as handlers and release hooks, and a captureless
// lambda as a typed signal handler through QTBUS_CALLBACK.
#include <qtbus.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

static_assert(!std::is_same<qtbus_token, qtbus_bag>::value, "handles are distinct types");
static_assert(!std::is_same<qtbus_command, qtbus_source>::value, "handles are distinct types");
static_assert(std::is_standard_layout<qtbus_sub_options>::value, "C layout");
static_assert(std::is_trivially_copyable<qtbus_event_desc>::value, "C layout");
static_assert(sizeof(qtbus_token) == sizeof(uint64_t), "64-bit id");

// Overloading on the handle types is possible because each is its own struct.
static const char *kind(qtbus_token) { return "token"; }
static const char *kind(qtbus_bag) { return "bag"; }

namespace {
struct Seen {
    int calls = 0;
    std::string last_subtype;
    std::string last_text;
};
} // namespace

#define CHECK_CXX(cond)                                                                                                \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            std::fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);                                    \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

int main()
{
    CHECK_CXX(std::strcmp(qtbus_version(), QTBUS_VERSION_STRING) == 0);
    // A struct that grows: its macro takes nullptr as the function does (-pedantic).
    CHECK_CXX(qtbus_queue_stats_get(nullptr, nullptr) == QTBUS_EINVAL);
    qtbus_bag bag{};
    CHECK_CXX(qtbus_bag_create(&bag) == QTBUS_OK);
    CHECK_CXX(std::strcmp(kind(bag), "bag") == 0);

    Seen plain, json, on_main;
    qtbus_handler h = [](const qtbus_event *ev, void *ud) {
        auto *s = static_cast<Seen *>(ud);
        s->calls++;
        const char *st = qtbus_event_subtype(ev);
        s->last_subtype = st ? st : "";
        size_t size = 0;
        const void *data = qtbus_event_data(ev, &size);
        s->last_text.assign(static_cast<const char *>(data ? data : ""), size);
    };

    CHECK_CXX(QTBUS_SUB(bag, "HeaderCheckCxx", h, &plain) == QTBUS_OK);
    CHECK_CXX(QTBUS_SUB_JSON(bag, "cxx.json", h, &json) == QTBUS_OK);
    CHECK_CXX(QTBUS_SUB_MAIN(bag, "HeaderCheckCxxMain", h, &on_main) == QTBUS_OK);

    qtbus_event_desc d{};
    d.type = "HeaderCheckCxx";
    d.data = "bytes";
    d.size = 5;
    CHECK_CXX(qtbus_dispatch(qtbus_shared(), &d) == 1);
    CHECK_CXX(plain.calls == 1 && plain.last_text == "bytes");

    CHECK_CXX(qtbus_dispatch_json(qtbus_shared(), "cxx.json", "[1,2]") == 1);
    CHECK_CXX(json.calls == 1 && json.last_subtype == "cxx.json" && json.last_text == "[1,2]");

    qtbus_event_desc m{};
    m.type = "HeaderCheckCxxMain";
    CHECK_CXX(qtbus_dispatch(qtbus_shared(), &m) == 1);
    CHECK_CXX(on_main.calls == 0);
    CHECK_CXX(qtbus_main_drain() == 1); // main() runs on the process's main thread
    CHECK_CXX(on_main.calls == 1);

    // A token with a lambda release hook, in the same bag.
    static std::atomic<int> released{0};
    qtbus_sub_options o{};
    o.bag = bag;
    o.priority = -1;
    qtbus_token t{};
    CHECK_CXX(qtbus_subscribe(
                  qtbus_shared(), "HeaderCheckCxx", &o, h, &plain, [](void *) { released++; }, &t) == QTBUS_OK);
    CHECK_CXX(std::strcmp(kind(t), "token") == 0);
    CHECK_CXX(qtbus_token_is_active(t) == 1);

    CHECK_CXX(qtbus_bag_dispose(bag) == QTBUS_OK);
    CHECK_CXX(released.load() == 1);
    CHECK_CXX(qtbus_token_is_active(t) == 0);
    CHECK_CXX(qtbus_dispatch(qtbus_shared(), &d) == 0);
    static const qtbus_arg args[] = {QTBUS_ARG_STRING, QTBUS_ARG_INT32};
    static int typed = 0;
    CHECK_CXX(qtbus_signal_define(qtbus_shared(), "HeaderCheckSignalCxx", args, 2) == QTBUS_OK);
    auto on_signal = +[](const char *text, int32_t number, void *) { typed += text[0] == 'x' && number == -1; };
    qtbus_token st{};
    CHECK_CXX(qtbus_signal_connect(qtbus_shared(), "HeaderCheckSignalCxx", nullptr, QTBUS_CALLBACK(on_signal), nullptr,
                                   nullptr, &st) == QTBUS_OK);
    CHECK_CXX(qtbus_signal_emit(qtbus_shared(), "HeaderCheckSignalCxx", nullptr, "x", int32_t{-1}) == 1);
    CHECK_CXX(typed == 1);
    CHECK_CXX(qtbus_token_dispose(st) == QTBUS_OK);
    std::printf("header check (C++ %ld): ok\n", static_cast<long>(__cplusplus));
    return 0;
}
