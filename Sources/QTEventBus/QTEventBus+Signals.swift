// SPDX-License-Identifier: MIT
// Typed signals from Swift: defining a type's signature and emitting its arguments, on
// the same events C (qtbus_signal_define, qtbus_signal_emit) and C++ (qtbus::signal)
// use. Receiving is `on(named:)` with `QTNamedEvent.signalArguments`
// (QTSignalArgument.swift).
//
// The engine's emit (qtbus_signal_emitv) reads each `qtbus_value` by the kind the type's
// signature gives it and can check only the count: a Swift `.string` where the
// signature has an int64 would be packed as a number, and an int64 where it has a
// string read as a pointer. So the Swift API checks the kinds first, against the
// signature the bus has (`_qtEngineSignalKinds`), and traps on a mismatch: it is a
// programmer error, the same as an invalid name (QTEventBus.docc, "Errors"), that the
// program can check for beforehand with `signalKinds(named:)`.
import CQtbusShims
import Glibc
import QTBusEngine

extension QTEventBus {
    /// Declares that events of the named type `type` carry arguments of `kinds`, in
    /// order, on this bus: C's `qtbus_signal_define`. C handlers connected with
    /// `qtbus_signal_connect`, C++ `qtbus::signal` slots and ``on(named:)`` subscribers
    /// (``QTNamedEvent/signalArguments``) then receive what any language emits with
    /// ``emitSignal(named:subType:_:)``, `qtbus_signal_emit` or `qtbus::signal::emit`.
    ///
    /// A signature lives as long as the bus and never changes. Defining the same one
    /// again does nothing; another one for a type that has a signature already (given
    /// by C, C++ or Swift) is a programmer error: the call traps, naming both. So are an
    /// invalid name (``isValidName(_:)``) and more than 16 kinds.
    public func defineSignal(named type: String, _ kinds: [QTSignalKind]) {
        let call = "defineSignal(named:_:)"
        _qtRequireName(type, .type, call)
        if kinds.count > Int(QTBUS_SIGNAL_MAX_ARGS) {
            _qtMisuse(call, "\(kinds.count) kinds: a signature has at most \(QTBUS_SIGNAL_MAX_ARGS)")
        }
        let args = kinds.map { qtbus_arg(rawValue: UInt32($0.rawValue)) }
        let status = type.withCString { name in
            args.withUnsafeBufferPointer { _qtbus_signal_define(raw, name, $0.baseAddress, $0.count) }
        }
        guard status < 0 else { return }
        if status == QTBUS_EINVAL.rawValue, let existing = signalKinds(named: type) {
            _qtMisuse(
                call,
                "the type \(_qtQuoted(type)) has another signature on this bus already: "
                    + "\(_qtSignature(existing)), not \(_qtSignature(kinds))")
        }
        _qtRefused(call, status)
    }

    /// The argument kinds of the named type's signature on this bus, in order, whoever
    /// defined it (C, C++ or Swift); nil when it has none. An invalid name
    /// (``isValidName(_:)``) traps.
    public func signalKinds(named type: String) -> [QTSignalKind]? {
        _qtRequireName(type, .type, "signalKinds(named:)")
        return type.withCString { _qtEngineSignalKinds(raw, $0) }?.map { QTSignalKind(rawValue: $0)! }
    }

    /// Emits a typed signal: an event of the named type `type` whose bytes carry `args`,
    /// packed as C's `qtbus_signal_emitv` packs them (strings are copied into the event).
    /// Every subscriber of the type receives it, now, on this thread, as
    /// ``dispatch(named:subType:bytes:sticky:)`` delivers: C handlers connected with
    /// `qtbus_signal_connect` with the arguments as their parameters, C++ `qtbus::signal`
    /// slots, plain C handlers (`qtbus_event_args`) and ``on(named:)`` subscribers
    /// (``QTNamedEvent/signalArguments``).
    ///
    /// Programmer errors trap, naming the call and the reason: an invalid `type` or
    /// `subType` (``isValidName(_:)``), a type with no signature on this bus
    /// (``defineSignal(named:_:)``, or C's or C++'s), arguments whose kinds are not the
    /// signature's (``signalKinds(named:)`` gives it), and a string argument holding a
    /// NUL byte (a signal's strings are C strings).
    ///
    /// - Returns: as ``dispatch(named:subType:bytes:sticky:)``: the subscriptions that
    ///   ran or were posted.
    @discardableResult
    public func emitSignal(named type: String, subType: String? = nil, _ args: [QTSignalArgument]) -> Int {
        let call = "emitSignal(named:subType:_:)"
        _qtRequireName(type, .type, call)
        if let subType { _qtRequireName(subType, .subtype, call) }
        let kinds = args.map(\.kind)
        guard let signature = signalKinds(named: type) else {
            _qtMisuse(
                call,
                "the type \(_qtQuoted(type)) has no signature on this bus "
                    + "(defineSignal(named:_:), qtbus_signal_define or qtbus::signal)")
        }
        if kinds != signature {
            _qtMisuse(
                call,
                "the arguments \(_qtSignature(kinds)) are not the signature of the type "
                    + "\(_qtQuoted(type)) on this bus, \(_qtSignature(signature))")
        }
        // The strings, each NUL-terminated, in one buffer the values point into.
        var text: [CChar] = []
        var offsets: [Int?] = []
        offsets.reserveCapacity(args.count)
        for (i, arg) in args.enumerated() {
            guard case .string(let s) = arg, let s else {
                offsets.append(nil)
                continue
            }
            if let at = s.utf8.firstIndex(of: 0) {
                _qtMisuse(
                    call,
                    "argument \(i + 1), the string \(_qtQuoted(s)), contains a NUL byte (at byte "
                        + "\(s.utf8.distance(from: s.utf8.startIndex, to: at))): a signal's strings are C strings")
            }
            offsets.append(text.count)
            text.append(contentsOf: s.utf8.map { CChar(bitPattern: $0) })
            text.append(0)
        }
        let status = text.withUnsafeBufferPointer { strings in
            var values = [qtbus_value](repeating: qtbus_value(u64: 0), count: args.count)
            for (i, arg) in args.enumerated() {
                switch arg {
                case .int32(let v): values[i].i32 = v
                case .uint32(let v): values[i].u32 = v
                case .int64(let v): values[i].i64 = v
                case .uint64(let v): values[i].u64 = v
                case .double(let v): values[i].f64 = v
                case .pointer(let v): values[i].ptr = UnsafeMutableRawPointer(bitPattern: v)
                case .string: values[i].str = offsets[i].map { strings.baseAddress! + $0 }
                }
            }
            return type.withCString { name in
                values.withUnsafeBufferPointer { v in
                    guard let subType else { return _qtbus_signal_emitv(raw, name, nil, 0, v.baseAddress, v.count) }
                    return subType.withCString { _qtbus_signal_emitv(raw, name, $0, 0, v.baseAddress, v.count) }
                }
            }
        }
        if status < 0 { _qtRefused(call, status) }
        return Int(status)
    }
}

/// A signature as the messages write it: "(string, int32)".
func _qtSignature(_ kinds: [QTSignalKind]) -> String {
    "(" + kinds.map(\.description).joined(separator: ", ") + ")"
}
