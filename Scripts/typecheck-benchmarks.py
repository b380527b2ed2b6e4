#!/usr/bin/env python3
"""Type-checks the benchmarks package against the modules the main debug build already made.

The benchmarks live in a package of their own (so the main build stays lean), and building it
compiles every dependency a second time: ten minutes and more on two cores. CI only needs to
know the benchmarks still compile against today's API, which the compiler can tell in seconds
from the main build's modules. This script takes the search paths and C module maps SwiftPM
used for the `relata` executable (which imports every library the benchmarks import) from the
main build's manifest, and runs `swiftc -typecheck` over the benchmark sources with them.

    Scripts/typecheck-benchmarks.py            # after `swift build` in the package root

When the manifest does not have what it needs (another SwiftPM layout), it says so and exits 3;
Scripts/test.sh then builds the benchmarks package in full.
Run the benchmarks themselves with `swift run -c release --package-path Benchmarks relata-benchmarks`.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, ".build", "debug.yaml")
MODULE = "relata"
# Flags that say where modules and headers are, and how to read the sources; each with the
# number of arguments that follow it. Output, incremental and index flags are left out.
KEPT = {"-I": 1, "-Xcc": 1, "-target": 1, "-swift-version": 1, "-module-cache-path": 1, "-sdk": 1}


def compile_arguments():
    try:
        with open(MANIFEST, encoding="utf-8") as manifest:
            text = manifest.read()
    except OSError as error:
        sys.exit(f"typecheck-benchmarks: cannot read {MANIFEST} ({error.strerror}); run `swift build` first")
    # The build folder `.build/debug` links to names the target triple: `.build/<triple>/debug`.
    triple = os.path.basename(os.path.dirname(os.path.realpath(os.path.join(ROOT, ".build", "debug"))))
    start = text.find(f'"C.{MODULE}-{triple}-debug.module"')
    found = re.search(r"args: \[(.*?)\]\n", text[start:], re.S) if start >= 0 else None
    if not found:
        print(f"typecheck-benchmarks: {MANIFEST} has no compile command for `{MODULE}`", file=sys.stderr)
        sys.exit(3)
    return [re.sub(r'\\(.)', r"\1", token) for token in re.findall(r'"((?:[^"\\]|\\.)*)"', found.group(1))]


def search_flags(arguments):
    flags, index = [], 1
    while index < len(arguments):
        argument = arguments[index]
        if argument in KEPT:
            flags += arguments[index:index + 1 + KEPT[argument]]
            index += 1 + KEPT[argument]
            continue
        if argument.startswith("-I") or argument.startswith("-D"):
            flags.append(argument)
        index += 1
    return flags


def main():
    arguments = compile_arguments()
    compiler = arguments[0]
    sources = sorted(glob.glob(os.path.join(ROOT, "Benchmarks", "Sources", "relata-benchmarks", "*.swift")))
    if not sources:
        sys.exit("typecheck-benchmarks: no sources in Benchmarks/Sources/relata-benchmarks")
    support = os.path.join(ROOT, "Benchmarks", "Sources", "CBenchmarkSupport", "module.modulemap")
    command = [compiler, "-typecheck", "-module-name", "relata_benchmarks", *search_flags(arguments),
               "-Xcc", f"-fmodule-map-file={support}", *sources]
    result = subprocess.run(command)
    if result.returncode == 0:
        print(f"The benchmarks ({len(sources)} files) type-check against this build.")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
