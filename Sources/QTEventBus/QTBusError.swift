// The engine's negative status codes (qtbus.h's qtbus_status) as a Swift error.
import CQtbusShims
import QTBusEngine

/// A failure reported by the engine: one case per negative `qtbus_status`.
///
/// Calls that can fail in ordinary use throw it (``QTEventBus/dispatchJSON(name:json:)``,
/// the awaited ``QTEventBus/request(_:timeout:)``); the dispatch calls, which QTEventBus
/// users call without `try`, return the negative status instead (``rawValue``), and a
/// subscription the bus refuses traps with the reason (a programmer error).
public enum QTBusError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `QTBUS_EINVAL`: an empty, over-long (> 255 bytes) or otherwise invalid name.
    case invalidArgument
    /// `QTBUS_ESTALE`: an unknown or already disposed handle.
    case stale
    /// `QTBUS_EJSON`: text given as JSON is not JSON (RFC 8259).
    case invalidJSON
    /// `QTBUS_ENOMEM`: out of memory.
    case outOfMemory
    /// `QTBUS_ECLOSED`: the bus is being destroyed.
    case closed
    /// `QTBUS_EBUSY`: a command is not enabled.
    case busy
    /// A status this version does not know.
    case other(Int32)

    /// The error for a negative engine status; nil for a status >= 0 (success).
    public init?(status: Int32) {
        guard status < 0 else { return nil }
        switch status {
        case QTBUS_EINVAL.rawValue: self = .invalidArgument
        case QTBUS_ESTALE.rawValue: self = .stale
        case QTBUS_EJSON.rawValue: self = .invalidJSON
        case QTBUS_ENOMEM.rawValue: self = .outOfMemory
        case QTBUS_ECLOSED.rawValue: self = .closed
        case QTBUS_EBUSY.rawValue: self = .busy
        default: self = .other(status)
        }
    }

    /// The engine status (a negative `qtbus_status`).
    public var rawValue: Int32 {
        switch self {
        case .invalidArgument: return QTBUS_EINVAL.rawValue
        case .stale: return QTBUS_ESTALE.rawValue
        case .invalidJSON: return QTBUS_EJSON.rawValue
        case .outOfMemory: return QTBUS_ENOMEM.rawValue
        case .closed: return QTBUS_ECLOSED.rawValue
        case .busy: return QTBUS_EBUSY.rawValue
        case .other(let status): return status
        }
    }

    /// The engine's English text for the status (`qtbus_strerror`).
    public var description: String { String(cString: _qtbus_strerror(rawValue)) }
}
