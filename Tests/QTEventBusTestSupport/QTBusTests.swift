// SPDX-License-Identifier: MIT
// The root of every swift-testing suite of the package (engine, QTEventBus and
// QTEventBusFoundation tests), run one test at a time.
import Testing

/// Every suite is nested here (`extension QTBusTests { @Suite("...") struct ... }`), so
/// that `.serialized` covers the whole run, across the three test targets: swift-testing
/// otherwise runs suites and tests in parallel, and these tests share the process.
/// - The engine's reclamation is process-wide: lifetime rule 1 ("if no dispatch is in
///   progress anywhere, release runs before dispose returns") is checked right after a
///   dispose by many tests, and a dispatch of any other test, on any bus, defers it.
/// - QTEventBus.shared is C's qtbus_shared(); the C peer's slots and its one request
///   record (cpeer.c) are process-wide, and several tests use the same names on them.
/// - Stress and timing tests (thread counts, usleep windows, 5 s bounded waits) assume
///   they have the machine to themselves.
@Suite("qtbus", .serialized)
public enum QTBusTests {}
