// SPDX-License-Identifier: MIT
// The arguments of a C typed signal (qtbus.h, "Typed signals"), read in Swift.
import CQtbusShims

/// One argument of a typed signal (C's `qtbus_signal_emit`, C++'s `qtbus::signal`,
/// ``QTEventBus/QTEventBus/emitSignal(named:subType:_:)``), by the kind its signature
/// declares (``QTSignalKind``, C's `qtbus_arg`).
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

/// The kind of one argument of a typed signal: C's `qtbus_arg`, the C type a C handler
/// takes it as, and the ``QTSignalArgument`` case that carries it.
public enum QTSignalKind: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// `QTBUS_ARG_INT32`: `int32_t`, ``QTSignalArgument/int32(_:)``
    case int32 = 1
    /// `QTBUS_ARG_UINT32`: `uint32_t`, ``QTSignalArgument/uint32(_:)``
    case uint32 = 2
    /// `QTBUS_ARG_INT64`: `int64_t`, ``QTSignalArgument/int64(_:)``
    case int64 = 3
    /// `QTBUS_ARG_UINT64`: `uint64_t`, ``QTSignalArgument/uint64(_:)``
    case uint64 = 4
    /// `QTBUS_ARG_DOUBLE`: `double`, ``QTSignalArgument/double(_:)``
    case double = 5
    /// `QTBUS_ARG_STRING`: `const char *` (copied into the event), ``QTSignalArgument/string(_:)``
    case string = 6
    /// `QTBUS_ARG_POINTER`: `void *` (passed as is), ``QTSignalArgument/pointer(_:)``
    case pointer = 7

    /// The kind's name: "int32", "string"...
    public var description: String {
        switch self {
        case .int32: "int32"
        case .uint32: "uint32"
        case .int64: "int64"
        case .uint64: "uint64"
        case .double: "double"
        case .string: "string"
        case .pointer: "pointer"
        }
    }
}

extension QTSignalArgument {
    /// The kind of the argument.
    public var kind: QTSignalKind {
        switch self {
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .pointer: .pointer
        }
    }
}

extension QTNamedEvent {
    /// The arguments, in signature order, when the bytes are a typed signal's (emitted
    /// by C, C++ or ``QTEventBus/QTEventBus/emitSignal(named:subType:_:)``); nil for any
    /// other bytes.  Checked as
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
