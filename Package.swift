// swift-tools-version:6.0
// SPDX-License-Identifier: MIT
// The same Sources/ tree CMake builds into libqtbus.so (see CMakeLists.txt).
//
// Supported platforms: Linux (glibc) with Swift 6.0 or later; tested on x86_64.  The
// engine uses Linux's futex and membarrier and libdispatch's main-queue SPI as Linux
// builds it, so macOS and Windows are not supported yet (README "Swift").  `platforms:`
// below could only set Apple minimums, so it is not used.
import PackageDescription

let package = Package(
    name: "qtbus",
    products: [
        // The Swift API over the same engine and buses (no Foundation).
        .library(name: "QTEventBus", targets: ["QTEventBus"]),
        // QTJsonEvent, Codable payloads and NotificationCenter bridging (Foundation).
        .library(name: "QTEventBusFoundation", targets: ["QTEventBusFoundation"]),
    ],
    targets: [
        // The public header (include/qtbus.h) plus the C glue the engine needs, and the
        // typed signals (signals.c), which call handlers through libffi (Debian:
        // libffi-dev; here the shared libffi, where libqtbus.so carries its own).
        .target(
            name: "CQtbusShims",
            path: "Sources/CQtbusShims",
            linkerSettings: [.linkedLibrary("dispatch"), .linkedLibrary("ffi")]
        ),
        // The Swift engine: registry, dispatch path, queues, C boundary. No Foundation.
        // Not a product: its Swift entry points are `package`, for QTEventBus only (C
        // code reaches the engine through qtbus.h's functions, which it exports).
        .target(
            name: "QTBusEngine",
            dependencies: ["CQtbusShims"],
            path: "Sources/QTBusEngine"
        ),
        // The Swift-native API (typed events, makers, tokens, bags, AsyncStream).
        // Dispatch and Synchronization only: never Foundation.
        .target(
            name: "QTEventBus",
            dependencies: ["QTBusEngine", "CQtbusShims"],
            path: "Sources/QTEventBus"
        ),
        .target(
            name: "QTEventBusFoundation",
            dependencies: ["QTEventBus"],
            path: "Sources/QTEventBusFoundation"
        ),
        .testTarget(
            name: "QTBusEngineTests",
            dependencies: ["QTBusEngine", "QTEventBusTestSupport"],
            path: "Tests/QTBusEngineTests"
        ),
        // The C peer: plain C code the Swift tests call, so that "C in the same process"
        // is real C talking to qtbus_shared() through qtbus.h (cpeer_* in cpeer.h).
        .target(
            name: "QTEventBusCTestSupport",
            dependencies: ["QTBusEngine"],
            path: "Tests/QTEventBusCTestSupport",
            cSettings: [.headerSearchPath("../../include")]
        ),
        // Swift test helpers (waits, recorders, reading what the C peer recorded) and
        // QTBusTests, the serialized root suite, shared by the three test targets.
        .target(
            name: "QTEventBusTestSupport",
            dependencies: ["QTEventBusCTestSupport"],
            path: "Tests/QTEventBusTestSupport"
        ),
        // Public names of RxSwift, declared here (RxSwift is not in the package mirror),
        // for the test that QTEventBus's names do not clash with them.
        .target(
            name: "RxSwiftNames",
            path: "Tests/RxSwiftNames"
        ),
        .testTarget(
            name: "QTEventBusTests",
            dependencies: ["QTEventBus", "QTBusEngine", "CQtbusShims", "QTEventBusCTestSupport", "QTEventBusTestSupport",
                           "RxSwiftNames"],
            path: "Tests/QTEventBusTests"
        ),
        .testTarget(
            name: "QTEventBusFoundationTests",
            dependencies: ["QTEventBusFoundation", "QTEventBus", "QTBusEngine", "QTEventBusCTestSupport",
                           "QTEventBusTestSupport"],
            path: "Tests/QTEventBusFoundationTests"
        ),
    ],
    swiftLanguageModes: [.v6]
)
