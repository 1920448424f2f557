// swift-tools-version:6.0
// SPDX-License-Identifier: MIT
// The Swift benchmark: qtbus's Swift API (QTEventBus) against NotificationCenter and
// OpenCombine's PassthroughSubject, side by side in one run.  A package of its own, so
// Swift users of qtbus never fetch its dependencies; scripts/bench.sh builds and runs it
// (swift build -c release --package-path Benchmarks/Swift).  See Sources/swift-bench/Bench.swift.
import PackageDescription

let package = Package(
    name: "qtbus-benchmarks",
    dependencies: [
        // The root package, by path; `name:` so that products resolve whatever the
        // checkout's directory is called.
        .package(name: "qtbus", path: "../.."),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        // The per-thread handler counter, CPU pinning and /proc readings, in C.
        .target(name: "BenchSupport", path: "Sources/BenchSupport"),
        .executableTarget(
            name: "swift-bench",
            dependencies: [
                "BenchSupport",
                .product(name: "QTEventBus", package: "qtbus"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ],
            path: "Sources/swift-bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
