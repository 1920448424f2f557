// QTBusError against qtbus.h's status table: every code the header defines has its own
// case, round-trips through rawValue, and says what qtbus_strerror says; the library's
// type names are the header's.
import CQtbusShims
import QTBusEngine
import QTEventBus
import XCTest

final class QTBusErrorTests: XCTestCase {
    func testEveryStatusOfTheHeaderRoundTrips() {
        let first = QTBUS__STATUS_LAST.rawValue + 1
        var cases: [QTBusError] = []
        for status in stride(from: Int32(-1), through: first, by: -1) {
            guard let error = QTBusError(status: status) else { return XCTFail("no error for \(status)") }
            if case .other = error { XCTFail("status \(status) of qtbus.h has no case of its own") }
            XCTAssertEqual(error.rawValue, status)
            XCTAssertEqual(error.description, String(cString: _qtbus_strerror(status)))
            XCTAssertFalse(cases.contains(error), "status \(status) shares the case \(error)")
            cases.append(error)
        }
        XCTAssertEqual(cases.count, 6)
        XCTAssertEqual(QTBusError(status: QTBUS__STATUS_LAST.rawValue), .other(QTBUS__STATUS_LAST.rawValue))
        XCTAssertEqual(QTBusError(status: -100)?.rawValue, -100)
        XCTAssertNil(QTBusError(status: 0))
        XCTAssertNil(QTBusError(status: 3))
    }

    func testTypeNamesAreTheHeaders() {
        XCTAssertEqual(QTEventBus.jsonTypeName, "QTJsonEvent")
        XCTAssertEqual(QTEventBus.noSubscriberTypeName, "QTNoSubscriberEvent")
        XCTAssertEqual(QTEventBus.commandExecutingTypeName, "QTCommandExecuting")
        XCTAssertEqual(QTEventBus.commandValueTypeName, "QTCommandValue")
        XCTAssertEqual(QTEventBus.commandErrorTypeName, "QTCommandError")
        XCTAssertEqual(QTEventBus.commandEnabledTypeName, "QTCommandEnabled")
        XCTAssertEqual(String(cString: _qtbus_version()), QTBUS_VERSION_STRING)
    }
}
