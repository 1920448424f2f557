// swift-tools-version:6.0
// SPDX-License-Identifier: MIT
// "One engine per process" (scripts/one-engine.sh): a Swift program using QTEventBus
// dlopen()s a C plugin (plugin.c) that links libqtbus.so, and both must be on the same
// qtbus_shared().  The engine's C entry points live statically in this executable; when
// the executable exports them, the dynamic linker binds the plugin's qtbus_* references
// to them (the executable comes first in the global lookup scope) and libqtbus.so's own
// copy is never entered.
//
//   one-engine-host           linked with the export list below: one engine (must pass)
//   one-engine-host-noexport  the same code without it: two engines (the negative control)
//
// Not part of the root package: it depends on it, like an application would.
import PackageDescription

let package = Package(
    name: "OneEngine",
    dependencies: [
        // name: the root's directory is not necessarily called "qtbus" (worktrees, CI).
        .package(name: "qtbus", path: "../..")
    ],
    targets: [
        .target(
            name: "OneEngineCheck",
            dependencies: [
                .product(name: "QTEventBus", package: "qtbus")
            ],
            path: "Sources/OneEngineCheck"
        ),
        // What an application that dlopen()s C code linking libqtbus adds
        // (docs/operations.md, "One engine per process"): export exactly the engine's C
        // entry points.
        .executableTarget(
            name: "one-engine-host",
            dependencies: ["OneEngineCheck"],
            path: "Sources/one-engine-host",
            linkerSettings: [
                .unsafeFlags(["-Xlinker", "--dynamic-list=\(Context.packageDirectory)/qtbus-exports.list"])
            ]
        ),
        .executableTarget(
            name: "one-engine-host-noexport",
            dependencies: ["OneEngineCheck"],
            path: "Sources/one-engine-host-noexport"
        ),
    ],
    swiftLanguageModes: [.v6]
)
