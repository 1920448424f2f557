// SPDX-License-Identifier: MIT
// NameTable (NameTable.swift): open addressing keyed by name bytes, tombstones on
// remove, growth past half full.
import Testing
import Glibc
import CQtbusShims
@testable import QTBusEngine

/// A table of SubtypeEntry (the simplest NamedEntry) owned by one test.
private final class Table {
    let root: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private(set) var entries: [UnsafeMutablePointer<SubtypeEntry>] = []
    private(set) var growths = 0

    init() {
        root = .allocate(capacity: 1)
        root.initialize(to: nil)
    }

    deinit {
        for e in entries {
            e.pointee.name.free()
            e.deinitialize(count: 1)
            e.deallocate()
        }
        NameTable<SubtypeEntry>.free(root.pointee)
        root.deallocate()
    }

    @discardableResult
    func insert(_ name: String) -> UnsafeMutablePointer<SubtypeEntry> {
        let entry: UnsafeMutablePointer<SubtypeEntry> = name.withCString { p in
            let e = UnsafeMutablePointer<SubtypeEntry>.allocate(capacity: 1)
            // The table only reads names; the entry's type is never followed here.
            e.initialize(
                to: SubtypeEntry(
                    name: StoredName(copying: CName(p)!)!,
                    type: UnsafeMutablePointer(bitPattern: 0x1000)!))
            return e
        }
        entries.append(entry)
        let before = root.pointee
        #expect(NameTable<SubtypeEntry>.insert(root, entry))
        if before != nil && root.pointee != before { growths += 1 }
        return entry
    }

    func remove(_ entry: UnsafeMutablePointer<SubtypeEntry>) {
        NameTable<SubtypeEntry>.remove(root.pointee, entry)
    }

    /// Looks `name` up through a fresh heap copy, so the bytes live at another address
    /// than the stored name and than any earlier lookup.
    func lookup(_ name: String) -> UnsafeMutablePointer<SubtypeEntry>? {
        let copy = strdup(name)!
        defer { free(copy) }
        return NameTable<SubtypeEntry>.lookup(root.pointee, CName(copy)!)
    }

    var count: Int { NameTable<SubtypeEntry>.count(root.pointee) }
}

extension Engine {
    @Suite("NameTable")
    struct NameTableTests {

        @Test("1000 names through several growths: each found by equal bytes at another address")
        func manyNames() {
            let table = Table()
            #expect(table.lookup("absent") == nil, "lookup in a table never made")
            var byName: [String: UnsafeMutablePointer<SubtypeEntry>] = [:]
            for i in 0..<1000 {
                let name = "name-\(i)"
                byName[name] = table.insert(name)
                // Everything inserted so far stays findable across each growth.
                if i % 97 == 0 {
                    for (n, e) in byName { #expect(table.lookup(n) == e) }
                }
            }
            #expect(table.growths >= 4, "8 -> 32 -> 128 -> 512 -> 2048 slots: \(table.growths) growths")
            #expect(table.count == 1000)
            for (n, e) in byName {
                #expect(table.lookup(n) == e)
                #expect(String(cString: e.pointee.name.bytes) == n)
            }
            for miss in ["name-1000", "name-", "name-01", "Name-1", "name-1 ", "x"] {
                #expect(table.lookup(miss) == nil, "\(miss)")
            }
            var seen = Set<UnsafeMutablePointer<SubtypeEntry>>()
            NameTable<SubtypeEntry>.forEach(table.root.pointee) { seen.insert($0) }
            #expect(seen == Set(byName.values))
        }

        @Test("removing leaves the others findable (tombstones keep probe chains)")
        func removeKeepsOthers() {
            let table = Table()
            var entries: [(String, UnsafeMutablePointer<SubtypeEntry>)] = []
            for i in 0..<600 { entries.append(("n\(i)", table.insert("n\(i)"))) }
            for (i, (_, e)) in entries.enumerated() where i % 2 == 0 { table.remove(e) }
            #expect(table.count == 300)
            for (i, (n, e)) in entries.enumerated() {
                if i % 2 == 0 {
                    #expect(table.lookup(n) == nil, "\(n) was removed")
                } else {
                    #expect(table.lookup(n) == e, "\(n) must survive its neighbours' removal")
                }
            }
            // Re-inserting a removed name finds the new entry (tombstone reuse).
            let again = table.insert("n0")
            #expect(table.lookup("n0") == again)
            #expect(table.count == 301)
        }

        @Test("insert/remove churn: tombstones never fill the table")
        func tombstoneChurn() {
            let table = Table()
            let keep = ["alpha", "beta", "gamma"].map { ($0, table.insert($0)) }
            for i in 0..<5000 {
                let e = table.insert("churn-\(i)")
                #expect(table.lookup("churn-\(i)") == e)
                table.remove(e)
                if i % 500 == 0 {
                    // A miss must end at an empty slot: this would spin forever if
                    // tombstones filled the table.
                    #expect(table.lookup("churn-\(i)") == nil)
                    #expect(table.lookup("never-inserted") == nil)
                }
            }
            #expect(table.count == 3)
            for (n, e) in keep { #expect(table.lookup(n) == e) }
        }

        @Test("names that share a prefix or differ in case are distinct keys")
        func nearNames() {
            let table = Table()
            let names = ["ab", "abc", "abcd", "abC", "ABC", "a", "b", "ba"]
            let entries = names.map { table.insert($0) }
            for (n, e) in zip(names, entries) { #expect(table.lookup(n) == e, "\(n)") }
            #expect(table.lookup("abcde") == nil)
            #expect(table.lookup("c") == nil)
        }

        // MARK: Through the C entry points (type and subtype tables of a bus)

        @Test("300 types and 300 subtypes on one bus: counts survive growth and removal")
        func tablesViaC() {
            let bus = newBus()
            defer { #expect(_qtbus_bus_destroy(bus) == OK) }
            let probe = Probe("p")
            var typeTokens: [qtbus_token] = []
            var subTokens: [qtbus_token] = []
            for i in 0..<300 {
                typeTokens.append(mustSubscribe(bus, "Type\(i)", probe))
                subTokens.append(mustSubscribe(bus, "Many", probe, subtypes: ["s\(i)"]))
            }
            for i in 0..<300 {
                #expect(countSubscribers(bus, "Type\(i)") == 1)
                #expect(countSubscribers(bus, "Many", "s\(i)") == 1)
            }
            #expect(countSubscribers(bus, "Many") == 300)
            // Drop every other subtype: its entry goes (tombstone); the rest stay reachable.
            for i in stride(from: 0, to: 300, by: 2) { #expect(_qtbus_token_dispose(subTokens[i]) == OK) }
            for i in 0..<300 {
                #expect(countSubscribers(bus, "Many", "s\(i)") == (i % 2 == 0 ? 0 : 1))
                #expect(dispatch(bus, "Many", subtype: "s\(i)") == (i % 2 == 0 ? 0 : 1))
            }
            #expect(probe.calls == 150)
            #expect(countSubscribers(bus, "Many") == 150)
            #expect(countSubscribers(bus, "NoSuchType") == 0)
            #expect(probe.releases == 150)
            withExtendedLifetime(probe) {}
        }
    }
}
