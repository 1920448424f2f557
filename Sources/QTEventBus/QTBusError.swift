// SPDX-License-Identifier: MIT
// The engine's negative status codes (qtbus.h's qtbus_status) as a Swift error, with
// the reason qtbus_errmsg() gives for them.
import CQtbusShims
import QTBusEngine

/// A refusal of the engine that a correct program cannot prevent: which status
/// (``code``) and why (``message``).
///
/// The calls that can be refused so throw it: ``QTEventBus/dispatchJSON(name:json:)``
/// (text that is not JSON), the awaited ``QTEventBus/request(_:timeout:)``,
/// ``QTCommand`` (busy, disposed), ``QTSource`` (disposed) and
/// ``QTEventBus/setTraceHook(_:_:)``, each also with ``outOfMemory``. A programmer
/// error (an invalid name, whatever the call) traps instead, and no call reports a
/// refusal through its result: see "Errors" in the overview.
///
/// Match it by its code, as Foundation's `URLError` or GRDB's `DatabaseError`:
/// `catch QTBusError.busy`, `catch let error as QTBusError where error.code == .stale`,
/// `#expect(throws: QTBusError.invalidJSON)`. Two errors are equal when their codes are:
/// the code says what failed, the message explains it to a person.
public struct QTBusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One case per negative `qtbus_status`.
    public enum Code: Hashable, Sendable {
        /// `QTBUS_EINVAL`: an empty, over-long (> 255 bytes) or otherwise invalid name.
        /// The Swift API traps on these (programmer errors) rather than throwing them;
        /// the code is here for the statuses C code hands over.
        case invalidArgument
        /// `QTBUS_ESTALE`: an unknown or already disposed handle.
        case stale
        /// `QTBUS_EJSON`: text given as JSON is not JSON (RFC 8259).
        case invalidJSON
        /// `QTBUS_ENOMEM`: out of memory.
        case outOfMemory
        /// `QTBUS_ECLOSED`: the bus is being destroyed. A `QTEventBus` lives as long as
        /// a call on it, so the Swift API meets this only for a bus destroyed behind
        /// its object (`cBus` given to `qtbus_bus_destroy`).
        case closed
        /// `QTBUS_EBUSY`: a command is not enabled.
        case busy
        /// `QTBUS_EIO`: a connection or I/O failure (a server could not be reached).
        case io
        /// `QTBUS_ETIMEDOUT`: a wait ran out of time (`qtbus_bus_wait_idle`), or a NATS
        /// bridge's close with a timeout dropped what the time did not allow.
        case timedOut
        /// `QTBUS_EACCES`: a server was reached and refused the credentials or a
        /// permission (the NATS bridge: a wrong password, token or key).
        case accessDenied
        /// A status this version does not know.
        case other(Int32)

        /// The code of a negative engine status; nil for a status >= 0 (success).
        public init?(status: Int32) {
            guard status < 0 else { return nil }
            switch status {
            case QTBUS_EINVAL.rawValue: self = .invalidArgument
            case QTBUS_ESTALE.rawValue: self = .stale
            case QTBUS_EJSON.rawValue: self = .invalidJSON
            case QTBUS_ENOMEM.rawValue: self = .outOfMemory
            case QTBUS_ECLOSED.rawValue: self = .closed
            case QTBUS_EBUSY.rawValue: self = .busy
            case QTBUS_EIO.rawValue: self = .io
            case QTBUS_ETIMEDOUT.rawValue: self = .timedOut
            case QTBUS_EACCES.rawValue: self = .accessDenied
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
            case .io: return QTBUS_EIO.rawValue
            case .timedOut: return QTBUS_ETIMEDOUT.rawValue
            case .accessDenied: return QTBUS_EACCES.rawValue
            case .other(let status): return status
            }
        }
    }

    /// Which status the engine returned.
    public let code: Code
    /// Why, in the words of `qtbus_errmsg()` on the thread that got the status ("the
    /// function: the reason"); empty when the failure was not an engine call's (a
    /// command disposed on the Swift side, for example) or the error was made by hand.
    public let message: String

    public init(_ code: Code, message: String = "") {
        self.code = code
        self.message = message
    }

    /// The error for a negative engine status, with no message; nil for a status >= 0.
    public init?(status: Int32) {
        guard let code = Code(status: status) else { return nil }
        self.init(code)
    }

    /// The engine status (a negative `qtbus_status`).
    public var rawValue: Int32 { code.rawValue }

    /// The message, or the engine's English text for the status (`qtbus_strerror`)
    /// when there is none.
    public var description: String {
        message.isEmpty ? String(cString: _qtbus_strerror(rawValue)) : message
    }

    public static let invalidArgument = QTBusError(.invalidArgument)
    public static let stale = QTBusError(.stale)
    public static let invalidJSON = QTBusError(.invalidJSON)
    public static let outOfMemory = QTBusError(.outOfMemory)
    public static let closed = QTBusError(.closed)
    public static let busy = QTBusError(.busy)
    public static let io = QTBusError(.io)
    public static let timedOut = QTBusError(.timedOut)
    public static let accessDenied = QTBusError(.accessDenied)
    /// A status this version does not know.
    public static func other(_ status: Int32) -> QTBusError { QTBusError(.other(status)) }

    public static func == (a: QTBusError, b: QTBusError) -> Bool { a.code == b.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `catch QTBusError.busy` on any error: the codes match.
    public static func ~= (pattern: QTBusError, error: any Error) -> Bool {
        (error as? QTBusError)?.code == pattern.code
    }

    /// The number of failed engine calls this thread has finished so far: take it
    /// before a call, and give it to ``init(status:since:)`` after.
    static var failuresSoFar: UInt32 { qtshim_failures() }

    /// The error of an engine call that returned `status` on this thread, with
    /// qtbus_errmsg()'s text when that call set it (the thread's count of failed calls
    /// moved on from `before`); nil for a status >= 0.
    init?(status: Int32, since before: UInt32) {
        guard let code = Code(status: status) else { return nil }
        self.init(code, message: qtshim_failures() != before ? String(cString: _qtbus_errmsg()) : "")
    }
}
