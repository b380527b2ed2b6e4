// swift-tools-version:6.1
// Benchmarks live in their own package so the main build stays lean.
// Run: swift run -c release --package-path Benchmarks relata-benchmarks [core|rules] [rows]
import PackageDescription

let package = Package(
    name: "RelataBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Relata", path: ".."),
    ],
    targets: [
        .systemLibrary(name: "CBenchmarkSupport", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        .executableTarget(name: "relata-benchmarks", dependencies: [
            .product(name: "Relata", package: "Relata"),
            .product(name: "RelataScript", package: "Relata"),
            "CBenchmarkSupport",
        ]),
    ],
    swiftLanguageModes: [.v6]
)
