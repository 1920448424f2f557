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
    /// other bytes.  Checked by the reader `qtbus_event_args` uses: any bytes are safe.
    public var signalArguments: [QTSignalArgument]? {
        bytes.withUnsafeBytes { QTSignalArgument.read($0) }
    }
}

extension QTSignalArgument {
    /// Reads the layout qtbus.h documents (magic, version, count, kinds, one 8-byte slot
    /// per argument, then the strings) with the library's own reader, `unpack` in
    /// signals.c, which qtbus_event_args, C's connected handlers and C++'s slots use too:
    /// these bytes are untrusted, and a second reader here could come to accept what
    /// that one refuses.  Its values hold each string as a pointer into `b`, checked to
    /// be NUL-terminated inside it.
    static func read(_ b: UnsafeRawBufferPointer) -> [QTSignalArgument]? {
        withUnsafeTemporaryAllocation(of: qtbus_value.self, capacity: Int(QTBUS_SIGNAL_MAX_ARGS)) { values in
            let count = Int(qtshim_signal_unpack(b.baseAddress, b.count, values.baseAddress))
            guard count >= 0 else { return nil }
            var result: [QTSignalArgument] = []
            result.reserveCapacity(count)
            for i in 0..<count {
                let v = values[i]
                // The kinds are the ones the reader accepted, at bytes 8..<8 + count.
                switch UInt32(b[8 + i]) {
                case QTBUS_ARG_INT32.rawValue: result.append(.int32(v.i32))
                case QTBUS_ARG_UINT32.rawValue: result.append(.uint32(v.u32))
                case QTBUS_ARG_INT64.rawValue: result.append(.int64(v.i64))
                case QTBUS_ARG_UINT64.rawValue: result.append(.uint64(v.u64))
                case QTBUS_ARG_DOUBLE.rawValue: result.append(.double(v.f64))
                case QTBUS_ARG_STRING.rawValue: result.append(.string(v.str.map { String(cString: $0) }))
                default: result.append(.pointer(UInt(bitPattern: v.ptr)))
                }
            }
            return result
        }
    }
}
