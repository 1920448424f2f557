// SPDX-License-Identifier: MIT
// The arguments of a C typed signal (qtbus.h, "Typed signals"), read in Swift.
import CQtbusShims

/// One argument of a C typed signal (`qtbus_signal_emit`), by the kind its signature
/// declares (`qtbus_arg`).
public enum QTSignalArgument: Sendable, Hashable {
    /// `QTBUS_ARG_INT32`
    case int32(Int32)
    /// `QTBUS_ARG_UINT32`
    case uint32(UInt32)
    /// `QTBUS_ARG_INT64`
    case int64(Int64)
    /// `QTBUS_ARG_UINT64`
    case uint64(UInt64)
    /// `QTBUS_ARG_DOUBLE`
    case double(Double)
    /// `QTBUS_ARG_STRING`: nil for a NULL string; invalid UTF-8 is repaired.
    case string(String?)
    /// `QTBUS_ARG_POINTER`: the address, which only the C side can use.
    case pointer(UInt)
}

extension QTNamedEvent {
    /// The arguments, in signature order, when the bytes are a C typed signal's
    /// (`qtbus_signal_emit`, `qtbus_signal_emitv`); nil for any other bytes.  Checked as
    /// `qtbus_event_args` checks them: any bytes are safe.
    public var signalArguments: [QTSignalArgument]? {
        bytes.withUnsafeBytes { QTSignalArgument.read($0) }
    }
}

extension QTSignalArgument {
    /// Reads the layout qtbus.h documents: magic, version, count, kinds (padded to 8),
    /// one 8-byte slot per argument (a string's holds the offset of its bytes, 0 for
    /// NULL), then the strings one after the other, each NUL-terminated.
    static func read(_ b: UnsafeRawBufferPointer) -> [QTSignalArgument]? {
        guard b.count >= 8, b[0] == 0x51, b[1] == 0x54, b[2] == 0x53, b[3] == 0x47,  // "QTSG"
              b[4] == UInt8(QTBUS_SIGNAL_LAYOUT_VERSION) else { return nil }
        let count = Int(b[5])
        let slots = 8 + (count + 7) / 8 * 8
        guard count <= Int(QTBUS_SIGNAL_MAX_ARGS), b.count >= slots + 8 * count else { return nil }
        // Strings follow one another after the slots, each ending before the next
        // begins, the last one at the end of the bytes.
        var floor = slots + 8 * count
        var sawString = false
        var result: [QTSignalArgument] = []
        result.reserveCapacity(count)
        for i in 0..<count {
            let at = slots + 8 * i
            switch UInt32(b[8 + i]) {
            case QTBUS_ARG_INT32.rawValue: result.append(.int32(b.loadUnaligned(fromByteOffset: at, as: Int32.self)))
            case QTBUS_ARG_UINT32.rawValue: result.append(.uint32(b.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
            case QTBUS_ARG_INT64.rawValue: result.append(.int64(b.loadUnaligned(fromByteOffset: at, as: Int64.self)))
            case QTBUS_ARG_UINT64.rawValue: result.append(.uint64(b.loadUnaligned(fromByteOffset: at, as: UInt64.self)))
            case QTBUS_ARG_DOUBLE.rawValue: result.append(.double(b.loadUnaligned(fromByteOffset: at, as: Double.self)))
            case QTBUS_ARG_POINTER.rawValue: result.append(.pointer(b.loadUnaligned(fromByteOffset: at, as: UInt.self)))
            case QTBUS_ARG_STRING.rawValue:
                let offset = b.loadUnaligned(fromByteOffset: at, as: UInt64.self)
                if offset == 0 {
                    result.append(.string(nil))
                    continue
                }
                guard offset >= UInt64(floor), offset < UInt64(b.count) else { return nil }
                let start = Int(offset)
                if sawString && b[start - 1] != 0 { return nil }
                guard let end = b[start...].firstIndex(of: 0) else { return nil }
                result.append(.string(String(decoding: b[start..<end], as: UTF8.self)))
                floor = start + 1
                sawString = true
            default:
                return nil
            }
        }
        if sawString && b[b.count - 1] != 0 { return nil }
        return result
    }
}
