// swift-tools-version:6.0
// The same Sources/ tree CMake builds into libqtbus.so (see CMakeLists.txt).
import PackageDescription

let package = Package(
    name: "qtbus",
    products: [
        // The engine with its C entry points (what libqtbus.so is).
        .library(name: "QTBusEngine", targets: ["QTBusEngine"]),
    ],
    targets: [
        // The public header (include/qtbus.h) plus the C glue the engine needs.
        .target(
            name: "CQtbusShims",
            path: "Sources/CQtbusShims",
            linkerSettings: [.linkedLibrary("dispatch")]
        ),
        // The Swift engine: registry, dispatch path, queues, C boundary. No Foundation.
        .target(
            name: "QTBusEngine",
            dependencies: ["CQtbusShims"],
            path: "Sources/QTBusEngine"
        ),
        .testTarget(
            name: "QTBusEngineTests",
            dependencies: ["QTBusEngine"],
            path: "Tests/QTBusEngineTests"
        ),
    ]
)
