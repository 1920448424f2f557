// SPDX-License-Identifier: MIT
// QTBusError against qtbus.h's status table: every code the header defines has its own
// case, round-trips through rawValue, and says what qtbus_strerror says; a thrown error
// carries qtbus_errmsg()'s text; matching goes by the code; the library's type names
// are the header's.
import CQtbusShims
import QTBusEngine
import QTEventBus
import QTEventBusTestSupport
import Testing

extension QTBusTests {
    @Suite("QTBusError")
    struct QTBusErrorTests {
        @Test func everyStatusOfTheHeaderRoundTrips() {
            let first = QTBUS__STATUS_LAST.rawValue + 1
            var cases: [QTBusError] = []
            for status in stride(from: Int32(-1), through: first, by: -1) {
                guard let error = QTBusError(status: status) else {
                    Issue.record("no error for \(status)")
                    return
                }
                if case .other = error.code { Issue.record("status \(status) of qtbus.h has no case of its own") }
                #expect(error.rawValue == status)
                #expect(error.description == String(cString: _qtbus_strerror(status)))
                #expect(!cases.contains(error), "status \(status) shares the case \(error)")
                cases.append(error)
            }
            #expect(cases.count == 9)
            #expect(QTBusError(status: QTBUS__STATUS_LAST.rawValue) == .other(QTBUS__STATUS_LAST.rawValue))
            #expect(QTBusError(status: -100)?.rawValue == -100)
            #expect(QTBusError(status: 0) == nil)
            #expect(QTBusError(status: 3) == nil)
        }

        @Test func aThrownErrorSaysWhyAsQtbusErrmsgDoes() throws {
            let bus = QTEventBus()
            do {
                _ = try bus.dispatchJSON(name: "Config", json: "{\"a\":")
                Issue.record("invalid JSON was dispatched")
            } catch {
                #expect(error.code == .invalidJSON)
                #expect(error.message.hasPrefix("qtbus_dispatch_json: the text is not JSON"), "\(error.message)")
                #expect(error.description == error.message)
            }
            // Each error has its own call's text, not the thread's previous one.
            let command = try QTCommand<String, String>(bus: bus, name: "Once") { _, execution in _ = execution.finish()
            }
            command.dispose()
            do {
                try command.start("x")
                Issue.record("a disposed command started")
            } catch {
                #expect(error == .stale)
                #expect(
                    error.message == "qtbus_command_execute: the command is disposed or was never made",
                    "\(error.message)")
            }
            do {
                try command.setEnabled(true)
                Issue.record("a disposed command was enabled")
            } catch {
                #expect(error == .stale)
                #expect(error.message.hasPrefix("qtbus_command_set_enabled: "), "\(error.message)")
            }
            do {
                _ = try bus.dispatchJSON(name: "Config", json: "{}\u{0}{")
                Issue.record("JSON text with a NUL byte was dispatched")
            } catch {
                #expect(error.code == .invalidJSON, "a NUL would have cut the text to valid JSON")
                #expect(error.message == "dispatchJSON(name:json:): the text is not JSON (it contains a NUL byte)")
            }
            #expect(QTBusError(status: QTBUS_ESTALE.rawValue)?.message == "", "made by hand: no text")
        }

        @Test func matchingGoesByTheCode() {
            let described = QTBusError(.busy, message: "qtbus_command_execute: the command is executing")
            #expect(described == .busy)
            #expect(described.hashValue == QTBusError.busy.hashValue)
            #expect(described.description == "qtbus_command_execute: the command is executing")
            #expect(QTBusError.busy.description == String(cString: _qtbus_strerror(QTBUS_EBUSY.rawValue)))
            let error: any Error = described
            switch error {
            case QTBusError.stale: Issue.record("busy matched stale")
            case QTBusError.busy: break
            default: Issue.record("busy did not match")
            }
            switch described.code {
            case .invalidArgument, .stale, .invalidJSON, .outOfMemory, .closed, .io, .timedOut, .accessDenied, .other:
                Issue.record("not busy")
            case .busy: break
            }
            #expect(QTBusError.other(-99).rawValue == -99 && QTBusError.other(-99) != .busy)
        }

        @Test func typeNamesAreTheHeaders() {
            #expect(QTEventBus.jsonTypeName == "QTJsonEvent")
            #expect(QTEventBus.noSubscriberTypeName == "QTNoSubscriberEvent")
            #expect(QTEventBus.commandExecutingTypeName == "QTCommandExecuting")
            #expect(QTEventBus.commandValueTypeName == "QTCommandValue")
            #expect(QTEventBus.commandErrorTypeName == "QTCommandError")
            #expect(QTEventBus.commandEnabledTypeName == "QTCommandEnabled")
            #expect(String(cString: _qtbus_version()) == QTBUS_VERSION_STRING)
        }
    }
}
