import Foundation
import FuzzSupport
import Relata

/// UpdateData's binary form: anything decoded encodes and decodes again to the same deltas, and
/// to what its JSON form decodes to.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDeltaBinary(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let (apply, deltas) = try? DeltaBinary.decodeRequest(fuzzData(start, count)) else { return 0 }
    guard let again = try? DeltaBinary.decode(DeltaBinary.encode(deltas, apply: apply)), again == deltas else {
        fatalError("decoded deltas do not survive their own encoding")
    }
    guard let json = try? DeltaJSON.decode(DeltaJSON.encode(deltas)), json == deltas else {
        fatalError("decoded deltas are not what their JSON carries")
    }
    return 0
}
