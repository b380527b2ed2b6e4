import Foundation
import FuzzSupport
import Relata

/// A GetData answer's row stream, read in two chunks split where the input says.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRowStream(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let data = fuzzData(start, count)
    guard let first = data.first else { return 0 }
    let bytes = data.dropFirst()
    let split = bytes.startIndex + Int(first) % (bytes.count + 1)
    var tables = RowStreamTables()
    do {
        try tables.consume(bytes[..<split])
        try tables.consume(bytes[split...])
        try tables.finish()
    } catch {}
    return 0
}
