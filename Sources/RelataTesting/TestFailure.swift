import Testing
import XCTest

/// Records a failure in whichever test framework is running: Swift Testing when
/// a `@Test` is current, XCTest otherwise.
enum TestFailure {
    struct Place {
        let fileID: String
        let filePath: StaticString
        let line: UInt
        let column: UInt
    }

    static func record(_ message: String, at place: Place) {
        if Test.current != nil {
            Issue.record(Comment(rawValue: message),
                         sourceLocation: SourceLocation(fileID: place.fileID, filePath: "\(place.filePath)",
                                                        line: Int(place.line), column: Int(place.column)))
        } else {
            XCTFail(message, file: place.filePath, line: place.line)
        }
    }
}
