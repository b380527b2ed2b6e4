// swift-tools-version:6.1
// libFuzzer targets for every decoder and parser that takes outside input, in their own
// package so the main build stays lean. Build and run one with `Scripts/fuzz.sh TARGET [SECONDS]`
// (see Documentation/Fuzzing.md); `Scripts/test.sh` runs each for a short time.
import PackageDescription

/// Each target is one file defining `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.
func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(name: name, dependencies: dependencies + ["FuzzSupport"],
                      swiftSettings: [.unsafeFlags(["-parse-as-library"])])
}

let relata: Target.Dependency = .product(name: "Relata", package: "Relata")
let relataScript: Target.Dependency = .product(name: "RelataScript", package: "Relata")
let relataTools: Target.Dependency = .product(name: "RelataTools", package: "Relata")

let package = Package(
    name: "RelataFuzz",
    platforms: [.macOS(.v14)],
    products: [
        // Fuzz/Server (the data server's target, in a package of its own) shares the helpers.
        .library(name: "FuzzSupport", targets: ["FuzzSupport"]),
    ],
    dependencies: [
        .package(name: "Relata", path: ".."),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [relata]),
        fuzzTarget("fuzz-briefcase", [relata]),
        fuzzTarget("fuzz-csv", [relata]),
        fuzzTarget("fuzz-json-table", [relata]),
        fuzzTarget("fuzz-delta-json", [relata]),
        fuzzTarget("fuzz-delta-binary", [relata]),
        fuzzTarget("fuzz-row-stream", [relata]),
        fuzzTarget("fuzz-expression", [relata]),
        fuzzTarget("fuzz-dasql", [relata]),
        fuzzTarget("fuzz-schema", [relata, relataScript, relataTools]),
        fuzzTarget("fuzz-edits", [relata, relataScript, relataTools]),
        fuzzTarget("fuzz-rule-tests", [relata, relataScript, relataTools]),
    ],
    swiftLanguageModes: [.v6]
)
