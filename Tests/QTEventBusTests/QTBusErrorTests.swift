// QTBusError against qtbus.h's status table: every code the header defines has its own
// case, round-trips through rawValue, and says what qtbus_strerror says; the library's
// type names are the header's.
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
                guard let error = QTBusError(status: status) else { Issue.record("no error for \(status)"); return }
                if case .other = error { Issue.record("status \(status) of qtbus.h has no case of its own") }
                #expect(error.rawValue == status)
                #expect(error.description == String(cString: _qtbus_strerror(status)))
                #expect(!cases.contains(error), "status \(status) shares the case \(error)")
                cases.append(error)
            }
            #expect(cases.count == 6)
            #expect(QTBusError(status: QTBUS__STATUS_LAST.rawValue) == .other(QTBUS__STATUS_LAST.rawValue))
            #expect(QTBusError(status: -100)?.rawValue == -100)
            #expect(QTBusError(status: 0) == nil)
            #expect(QTBusError(status: 3) == nil)
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
