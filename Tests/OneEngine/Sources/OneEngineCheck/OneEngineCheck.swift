// SPDX-License-Identifier: MIT
// The check both host executables run (Package.swift): dlopen the C plugin, then verify
// that the plugin and this Swift program are on one engine, one qtbus_shared().
//
// Exit status: 0 one engine (every check passed); 3 two engines (the plugin sees another
// bus and no event crosses, which is what a host without the export gets); 1 anything
// else (usage, dlopen/dlsym failure, or an inconsistent mix of passes and failures).
import QTEventBus
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Swift → C: a typed Swift event that joins the named type the plugin subscribes to,
/// and carries bytes C can read.
struct Ping: QTBytesEvent {
    static var eventName: String { "OneEnginePing" }
    let text: String
    var eventSubType: String? { "swift" }
    var eventBytes: [UInt8] { Array(text.utf8) }
    init(text: String) { self.text = text }
    init?(eventBytes: UnsafeRawBufferPointer, subType: String?) {
        text = String(decoding: eventBytes, as: UTF8.self)
    }
}

/// What the Swift handler received (C → Swift).
final class Received: Sendable {
    let events = Mutex<[QTNamedEvent]>([])
    func append(_ event: QTNamedEvent) { events.withLock { $0.append(event) } }
    var all: [QTNamedEvent] { events.withLock { $0 } }
}

private typealias StartFn = @convention(c) (UnsafePointer<CChar>?) -> OpaquePointer?
private typealias DispatchFn =
    @convention(c) (
        UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafePointer<CChar>?
    ) -> Int32
private typealias ReceivedFn =
    @convention(c) (
        UnsafeMutablePointer<UInt8>?,
        UnsafeMutablePointer<UInt8>?, Int
    ) -> Int32
private typealias CountFn = @convention(c) () -> Int32
private typealias AddressFn = @convention(c) () -> UnsafeMutableRawPointer?
private typealias TextFn = @convention(c) () -> UnsafePointer<CChar>?
private typealias ObjectOfFn = @convention(c) (UnsafeRawPointer?) -> UnsafePointer<CChar>?

private func fail(_ message: String) -> Never {
    print("error: \(message)")
    exit(1)
}

private func lastDlError() -> String {
    dlerror().map { String(cString: $0) } ?? "unknown dlerror"
}

/// Runs the check and exits with its status (see the top of this file).
/// `CommandLine.arguments[1]` is the plugin's path.  `control`: the negative control,
/// whose checks are expected to fail; it marks them "no" rather than "FAIL".
public func oneEngineCheck(variant: String, control: Bool = false) -> Never {
    guard CommandLine.arguments.count == 2 else {
        fail("usage: \(CommandLine.arguments[0]) PATH/TO/plugin.so")
    }
    let pluginPath = CommandLine.arguments[1]
    print("one-engine check: \(variant)")

    // Before the plugin is loaded, the global scope holds qtbus_shared only if this
    // executable exports it.
    let exported = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "qtbus_shared")  // RTLD_DEFAULT

    var allPassed = true
    func check(_ name: String, _ ok: Bool, _ detail: String) {
        allPassed = allPassed && ok
        print("  \(ok ? "ok  " : control ? "no  " : "FAIL") \(name): \(detail)")
    }

    let got = Received()
    let swiftToken = QTEventBus.shared.on(named: "OneEnginePong").next { got.append($0) }

    guard let handle = dlopen(pluginPath, RTLD_NOW | RTLD_LOCAL) else {
        fail("dlopen(\(pluginPath)): \(lastDlError())")
    }
    func symbol<T>(_ name: String, as type: T.Type) -> T {
        guard let sym = dlsym(handle, name) else { fail("dlsym(\(name)): \(lastDlError())") }
        return unsafeBitCast(sym, to: type)
    }
    let pluginStart = symbol("plugin_start", as: StartFn.self)
    let pluginStartErrmsg = symbol("plugin_start_errmsg", as: TextFn.self)
    let pluginDispatch = symbol("plugin_dispatch", as: DispatchFn.self)
    let pluginReceived = symbol("plugin_received", as: ReceivedFn.self)
    let pluginReleased = symbol("plugin_released", as: CountFn.self)
    let pluginStop = symbol("plugin_stop", as: CountFn.self)
    let pluginSharedAddress = symbol("plugin_qtbus_shared_address", as: AddressFn.self)
    let pluginObjectOf = symbol("plugin_object_of", as: ObjectOfFn.self)
    func object(defining address: UnsafeRawPointer?) -> String {
        guard let address else { return "(none)" }
        return pluginObjectOf(address).map { String(cString: $0) } ?? "?"
    }

    print("  this executable exports qtbus_*: \(exported == nil ? "no" : "yes (\(object(defining: exported)))")")
    print("  plugin: \(pluginPath) (dlopen RTLD_NOW|RTLD_LOCAL)")
    print("  the plugin's qtbus_shared is bound to: \(object(defining: pluginSharedAddress()))")
    // dlsym on the plugin's handle searches the plugin and its dependencies, not the
    // executable: this is libqtbus.so's own definition (only looked up, never called).
    let libraryOwn = dlsym(handle, "qtbus_shared")
    print("  libqtbus.so loaded for the plugin: \(object(defining: libraryOwn))")

    let swiftBus = QTEventBus.shared.cBus  // the engine's qtbus_shared() of this program

    func readPlugin() -> (count: Int32, data: String, subType: String) {
        var data = [UInt8](repeating: 0, count: 256), subType = [UInt8](repeating: 0, count: 256)
        let count = pluginReceived(&data, &subType, 256)
        return (
            count, String(decoding: data.prefix { $0 != 0 }, as: UTF8.self),
            String(decoding: subType.prefix { $0 != 0 }, as: UTF8.self)
        )
    }

    // 1. Same bus.
    let pluginBus = pluginStart("OneEnginePing")
    guard let pluginBus else { fail("plugin_start: qtbus_subscribe failed") }
    let sameBus = pluginBus == swiftBus
    check("the plugin's qtbus_shared() is Swift's", sameBus, "plugin \(pluginBus), Swift \(swiftBus)")
    // The library's own word on it: qtbus_errmsg() on the plugin's thread after its
    // first qtbus_shared() warns of a second engine, and only then (qtbus.h).
    let startErrmsg = pluginStartErrmsg().map { String(cString: $0) } ?? ""
    let warned = startErrmsg.contains("One engine per process")
    check(
        "qtbus_errmsg() after the plugin's qtbus_shared() warns of no second engine", !warned,
        "\"\(startErrmsg)\"")

    // 2. C → Swift.
    let cReached = pluginDispatch("OneEnginePong", "c", "hello from C")
    let swiftGot = got.all
    let expected = QTNamedEvent(type: "OneEnginePong", subType: "c", bytes: Array("hello from C".utf8))
    let cToSwift = cReached == 1 && swiftGot == [expected]
    check(
        "a C dispatch from the plugin reaches the Swift handler", cToSwift,
        "qtbus_dispatch reached \(cReached), Swift received \(swiftGot)")

    // 3. Swift → C.
    let swiftReached = QTEventBus.shared.dispatch(Ping(text: "hello from Swift"))
    let c = readPlugin()
    let swiftToC = swiftReached == 1 && c.count == 1 && c.data == "hello from Swift" && c.subType == "swift"
    check(
        "a Swift dispatch reaches the plugin's C handler", swiftToC,
        "dispatch reached \(swiftReached), C received \(c.count) (last: \"\(c.data)\", subtype \"\(c.subType)\")")

    // 4. Disposal on both sides.
    let stopStatus = pluginStop()
    let released = pluginReleased()
    check(
        "plugin_stop disposes the C subscription, its release hook runs once",
        stopStatus == 0 && released == 1, "qtbus_token_dispose -> \(stopStatus), release ran \(released)x")
    let afterStop = QTEventBus.shared.dispatch(Ping(text: "after stop"))
    let cAfter = readPlugin().count
    check(
        "after it, a Swift dispatch reaches nobody", afterStop == 0 && cAfter == 1,
        "dispatch reached \(afterStop), C received \(cAfter) in all")
    swiftToken.dispose()
    let afterDispose = pluginDispatch("OneEnginePong", "c", "after dispose")
    check(
        "after Swift's token.dispose(), a C dispatch reaches nobody",
        afterDispose == 0 && got.all.count == 1,
        "qtbus_dispatch reached \(afterDispose), Swift received \(got.all.count) in all")
    _ = handle  // the plugin stays loaded until exit (libqtbus.so is never unloaded)

    if allPassed {
        print("result: one engine: the plugin and the Swift code share qtbus_shared() \(swiftBus)")
        exit(0)
    }
    if !sameBus && cReached == 0 && swiftGot.isEmpty && swiftReached == 0 && c.count == 0 && warned {
        print(
            "result: two engines: the plugin's qtbus_* run libqtbus.so's own engine (bus \(pluginBus)),"
                + " not this executable's (bus \(swiftBus)); link the executable with"
                + " -Xlinker --dynamic-list=<file with { qtbus_*; };> (docs/operations.md: One engine per process)")
        exit(3)
    }
    print("result: FAILED (inconsistent: neither one engine nor two separate ones), see the checks above")
    exit(1)
}
