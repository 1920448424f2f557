/* SPDX-License-Identifier: MIT */
/*
 * test_dlopen: the installed libqtbus.so loads with dlopen after start-up, in a process
 * that has already used glibc's static-TLS surplus, and works there.
 *
 * Users rely on it when they load the library late: Python's ctypes.CDLL, a plugin host.
 * A library with any initial-exec thread-local needs its whole TLS block in that
 * surplus; once other libraries have taken it, dlopen fails with "cannot allocate
 * memory in static TLS block" (0.2.0 did, with 760 bytes).  The process runs with
 * GLIBC_TUNABLES=glibc.rtld.nns=1:glibc.rtld.optional_static_tls=0, which leaves no
 * surplus to speak of (the test re-executes itself with it); then, through dlsym only,
 * it dispatches on the loading thread, on another thread, and to a handler on a created
 * queue (whose thread reaches the library's thread-locals too).
 */
#define _GNU_SOURCE
#include <qtbus.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TUNABLES "glibc.rtld.nns=1:glibc.rtld.optional_static_tls=0"

static int failed;
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond);                                         \
            failed = 1;                                                                                                \
        }                                                                                                              \
    } while (0)

static struct {
    qtbus_bus *(*bus_create)(void);
    int (*bus_destroy)(qtbus_bus *);
    int (*subscribe)(qtbus_bus *, const char *, const qtbus_sub_options *, qtbus_handler, void *, void (*)(void *),
                     qtbus_token *);
    int (*dispatch)(qtbus_bus *, const qtbus_event_desc *);
    qtbus_queue *(*queue_create)(const char *);
    void (*queue_release)(qtbus_queue *);
    int (*wait_idle)(qtbus_bus *, int);
    const char *(*errmsg)(void);
} api;

static atomic_int calls;
static void count(const qtbus_event *event, void *userdata)
{
    (void)event;
    (void)userdata;
    atomic_fetch_add(&calls, 1);
}

static qtbus_bus *bus;

static void *dispatch_from_thread(void *unused)
{
    (void)unused;
    qtbus_event_desc d;
    memset(&d, 0, sizeof d);
    d.type = "E";
    for (int i = 0; i < 100; i++)
        CHECK(api.dispatch(bus, &d) == 2);
    return NULL;
}

/* Under ThreadSanitizer the instrumented library, once dlopen'ed, needs runtime symbols
 * (__tsan_external_write) that the runtime linked into this program does not export:
 * skipped there (ctest's SKIP_RETURN_CODE).  The library this checks is the shipped one,
 * built without sanitizers; AddressSanitizer's build passes it too. */
#if defined(__SANITIZE_THREAD__)
#define QTBUS_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define QTBUS_UNDER_TSAN 1
#endif
#endif

int main(int argc, char **argv)
{
    (void)argc;
#if defined(QTBUS_UNDER_TSAN)
    (void)argv;
    (void)dispatch_from_thread;
    printf("test_dlopen: skipped under ThreadSanitizer\n");
    return 77;
#endif
    const char *tunables = getenv("GLIBC_TUNABLES");
    if (!tunables || strcmp(tunables, TUNABLES) != 0) {
        setenv("GLIBC_TUNABLES", TUNABLES, 1);
        /* By the path it was run with: under valgrind /proc/self/exe is valgrind's. */
        execv(strchr(argv[0], '/') ? argv[0] : "/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    void *lib = dlopen(QTBUS_INSTALLED_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "test_dlopen: FAILED: dlopen(%s) with %s: %s\n", QTBUS_INSTALLED_LIBRARY, TUNABLES, dlerror());
        return 1;
    }
#define BIND(field, name) CHECK((*(void **)&api.field = dlsym(lib, name)) != NULL)
    BIND(bus_create, "qtbus_bus_create");
    BIND(bus_destroy, "qtbus_bus_destroy");
    BIND(subscribe, "qtbus_subscribe");
    BIND(dispatch, "qtbus_dispatch");
    BIND(queue_create, "qtbus_queue_create");
    BIND(queue_release, "qtbus_queue_release");
    BIND(wait_idle, "qtbus_bus_wait_idle");
    BIND(errmsg, "qtbus_errmsg");
    if (failed) return 1;

    bus = api.bus_create();
    qtbus_queue *queue = api.queue_create("dlopened");
    CHECK(bus && queue);
    qtbus_sub_options direct, queued;
    memset(&direct, 0, sizeof direct);
    memset(&queued, 0, sizeof queued);
    queued.queue = queue;
    qtbus_token t1, t2;
    CHECK(api.subscribe(bus, "E", &direct, count, NULL, NULL, &t1) == QTBUS_OK);
    CHECK(api.subscribe(bus, "E", &queued, count, NULL, NULL, &t2) == QTBUS_OK);
    dispatch_from_thread(NULL);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, dispatch_from_thread, NULL) == 0);
    CHECK(pthread_join(thread, NULL) == 0);
    CHECK(api.wait_idle(bus, 10000) == QTBUS_OK);
    CHECK(atomic_load(&calls) == 2 * 200);
    /* A refused call's message lives in a thread-local too. */
    CHECK(api.dispatch(NULL, NULL) == QTBUS_EINVAL);
    CHECK(strstr(api.errmsg(), "qtbus_dispatch") != NULL);
    CHECK(api.bus_destroy(bus) == QTBUS_OK);
    api.queue_release(queue);
    if (failed) return 1;
    printf("test_dlopen: ok (dlopen after start-up with %s)\n", TUNABLES);
    return 0;
}
