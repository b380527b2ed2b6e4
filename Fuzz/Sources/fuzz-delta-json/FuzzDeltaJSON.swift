import Foundation
import FuzzSupport
import Relata

/// UpdateData's JSON: anything decoded encodes and decodes again to the same deltas.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeltaJSON(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let deltas = try? DeltaJSON.decode(fuzzData(start, count)) else { return 0 }
    guard let again = try? DeltaJSON.decode(DeltaJSON.encode(deltas)), again == deltas else {
        fatalError("decoded deltas do not survive their own encoding")
    }
    return 0
}
