import Foundation
import FuzzSupport
import Relata

/// CSV table data over a table with a field of every storage kind.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCSV(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let table = try? DataTable(name: "T", fields: everyKindOfField, csv: fuzzText(start, count)) else { return 0 }
    _ = table.csvText()
    return 0
}

