// Reading what the C test support (CSupport/ctest.c) recorded.
import QTEventBusCTestSupport

/// What C slot `slot` last received.
struct CReceived {
    let slot: Int32

    var count: Int { Int(ctest_count(slot)) }

    var data: String {
        var buffer = [CChar](repeating: 0, count: 1024)
        _ = ctest_last_data(slot, &buffer, buffer.count)
        return text(buffer)
    }

    var size: Int {
        var buffer = [CChar](repeating: 0, count: 8)
        return ctest_last_data(slot, &buffer, buffer.count)
    }

    var type: String {
        var buffer = [CChar](repeating: 0, count: 256)
        ctest_last_type(slot, &buffer, buffer.count)
        return text(buffer)
    }

    var subType: String {
        var buffer = [CChar](repeating: 0, count: 256)
        ctest_last_subtype(slot, &buffer, buffer.count)
        return text(buffer)
    }

    var terminated: Bool { ctest_last_terminated(slot) == 1 }
    var hadObject: Bool { ctest_last_had_object(slot) == 1 }

    func stop() { _ = ctest_stop(slot) }

    private func text(_ buffer: [CChar]) -> String {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
