import Foundation
import FuzzSupport
@testable import Relata

/// Briefcase files: any bytes load or fail with a RelataError. An input starting with a zero
/// byte is a payload the harness frames with a valid header and checksum, as a buggy or hostile
/// writer would: the reader's own checks, not the checksum, must stop it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBriefcase(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    var data = fuzzData(start, count)
    if data.first == 0 {
        data = Data(BriefcaseContainer.make(.briefcase) { writer in for byte in data.dropFirst() { writer.write(byte) } })
    }
    guard let briefcase = try? Briefcase(data: data) else { return 0 }
    for table in briefcase.tables {
        _ = table.rows.map(\.rowState)
        _ = try? table.makeDelta()
    }
    return 0
}
