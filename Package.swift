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
        // QTNATSBridge: buses of several processes joined through a NATS server (the
        // bridge's C sources, nats/, built here; nats.c from the system: libnats-dev).
        // Only a package that depends on this product needs nats.c (README "Swift").
        .library(name: "QTEventBusNATS", targets: ["QTEventBusNATS"]),
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
        // nats.c, the NATS client library the bridge uses, found through pkg-config
        // (libnats.pc) with its module map in Sources/CNATS.
        .systemLibrary(
            name: "CNATS",
            path: "Sources/CNATS",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        // The bridge in C: the very sources CMake builds into libqtbus-nats.so (nats/,
        // through the link Sources/CQtbusNATS/nats), over this package's engine rather
        // than libqtbus.so. Its module is include/qtbus_nats.h (linked into include/,
        // with qtbus.h, which it includes as <qtbus.h>). Compiled as CMake compiles them:
        // gnu11 (cLanguageStandard, below), _GNU_SOURCE where a file defines it, and
        // _FORTIFY_SOURCE=2 in release builds.
        .target(
            name: "CQtbusNATS",
            dependencies: ["QTBusEngine", "CNATS"],
            path: "Sources/CQtbusNATS",
            cSettings: [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]
        ),
        // The Swift API of the bridge (QTNATSBridge). No Foundation.
        .target(
            name: "QTEventBusNATS",
            dependencies: ["QTEventBus", "QTBusEngine", "CQtbusShims", "CQtbusNATS"],
            path: "Sources/QTEventBusNATS"
        ),
        // The Swift NATS example, beside the C and C++ ones (scripts/nats-demo.sh --swift).
        .executableTarget(
            name: "qtbus-nats-demo",
            dependencies: ["QTEventBusNATS", "QTEventBus"],
            path: "examples/swift/nats_demo"
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
            dependencies: [
                "QTEventBus", "QTBusEngine", "CQtbusShims", "QTEventBusCTestSupport", "QTEventBusTestSupport",
                "RxSwiftNames",
            ],
            path: "Tests/QTEventBusTests"
        ),
        .testTarget(
            name: "QTEventBusFoundationTests",
            dependencies: [
                "QTEventBusFoundation", "QTEventBus", "QTBusEngine", "QTEventBusCTestSupport",
                "QTEventBusTestSupport",
            ],
            path: "Tests/QTEventBusFoundationTests"
        ),
        // Against nats-servers the tests start themselves (nats-server on PATH or in
        // /usr/sbin).
        .testTarget(
            name: "QTEventBusNATSTests",
            dependencies: ["QTEventBusNATS", "QTEventBus", "QTEventBusFoundation", "QTEventBusTestSupport", "CNATS"],
            path: "Tests/QTEventBusNATSTests"
        ),
    ],
    swiftLanguageModes: [.v6],
    // CMake's C_STANDARD 11 with C_EXTENSIONS ON, for every C target.
    cLanguageStandard: .gnu11
)
