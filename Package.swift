// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "Relata",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "Relata", targets: ["Relata"]),
    ],
    targets: [
        // The core model: values, fields, tables, rows, deltas, expressions. Foundation only.
        .target(name: "Relata"),
        // The README's five-minute tour, compiled so it cannot rot; `Scripts/demo.sh` runs it.
        .executableTarget(name: "relata-tour", dependencies: ["Relata"], path: "Examples/Tour"),
        .testTarget(name: "RelataTests", dependencies: ["Relata"]),
    ],
    swiftLanguageModes: [.v6]
)
