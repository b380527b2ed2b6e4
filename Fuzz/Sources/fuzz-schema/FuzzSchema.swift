import Foundation
import FuzzSupport
import RelataScript
import RelataTools

/// Schema files: parsed and checked (data, script and test paths resolve beside a file that does not exist).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSchema(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    _ = try? Schema(json: fuzzData(start, count), url: URL(fileURLWithPath: "/nonexistent/fuzz.schema.json"))
    return 0
}
