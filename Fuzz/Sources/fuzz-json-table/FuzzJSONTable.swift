import Foundation
import FuzzSupport
import Relata

/// JSON table data over a table with a field of every storage kind.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONTable(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let table = try? DataTable(name: "T", fields: everyKindOfField, json: fuzzData(start, count)) else { return 0 }
    _ = try? table.jsonData()
    return 0
}

