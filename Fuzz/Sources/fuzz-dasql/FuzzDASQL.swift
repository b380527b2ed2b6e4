import FuzzSupport
import Relata

/// DA SQL: any text either parses into a query or is refused with a line and column — never a trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDASQL(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let query = try? DASQLQuery(fuzzText(start, count)) else { return 0 }
    _ = query.parameterNames
    _ = query.tableNames
    return 0
}
