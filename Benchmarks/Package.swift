// swift-tools-version:6.1
// Benchmarks live in their own package so the main build stays lean.
// Run: swift run -c release --package-path Benchmarks relata-benchmarks [core|rules|briefcase|server|postgres|error-cost] [rows]
import PackageDescription

let package = Package(
    name: "RelataBenchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Relata", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
    ],
    targets: [
        .systemLibrary(name: "CBenchmarkSupport", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]),
        // JavaScriptCore's C API (WebKitGTK on Linux) for the rules' floor.
        .systemLibrary(name: "CBenchmarkJavaScriptCore", pkgConfig: "javascriptcoregtk-4.1", providers: [.apt(["libjavascriptcoregtk-4.1-dev"])]),
        .executableTarget(name: "relata-benchmarks", dependencies: [
            .product(name: "Relata", package: "Relata"),
            .product(name: "RelataScript", package: "Relata"),
            .product(name: "RelataServer", package: "Relata"),
            .product(name: "RelataRemote", package: "Relata"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            "CBenchmarkSupport",
            .target(name: "CBenchmarkJavaScriptCore", condition: .when(platforms: [.linux])),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
