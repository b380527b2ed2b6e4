import Foundation
import FuzzSupport
import Relata

/// Briefcase files: any bytes load or fail with a RelataError; a table that loads can be saved again.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBriefcase(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let briefcase = try? Briefcase(data: fuzzData(start, count)) else { return 0 }
    for table in briefcase.tables {
        _ = table.rows.map(\.rowState)
        _ = try? table.makeDelta()
    }
    return 0
}
