#!/usr/bin/env python3
"""Where the first target's rounds spend their CPU, from a `perf script` of
`RELATA_PROFILE=endtoend relata-benchmarks server 100000 apply` (see Benchmarks/README.md).

A round is the time from its first edit to the end of its fold-back (found by the frames the
client's thread runs: `incrementQuantities`, then `RemoteDataAdapter.deliver`). Every sample of
every thread inside a round counts. Three tables are printed:

- by family: the library of each sample's innermost frame (JavaScriptCore, the kernel, SQLite,
  Swift's reference counting, ...), what the CPU was doing whatever part of Relata asked for it;
- the kernel's part of that by its work: page faults, mapping memory, the thread CPU clock, ...;
- by phase: the first entry of PHASES whose frames the sample's stack names. A stack cut short
  (in JavaScriptCore's compiled code, which has no unwinding information) is put in the phase of
  its thread's last sample (taken at most 20 ms before), and counted apart too.

usage: RELATA_PROFILE=endtoend perf record -F 250 --call-graph dwarf,16384 -o FILE.perf relata-benchmarks server 100000 apply
       perf script -i FILE.perf | swift demangle --simplified > FILE.txt
       Benchmarks/Scripts/round-profile.py FILE.txt [sampling frequency, Hz; default 250]
"""
import collections
import re
import sys

PHASES = [
    # (phase, alternatives: lists of frames a stack must all name). The first phase that matches
    # counts, so the narrower come first.
    ('client: the edit (row rules, notifications, change tracking)', [['incrementQuantities']]),
    ('client: the answer folded back', [['RemoteDataAdapter.deliver'], ['DataTable.accept']]),
    ('client and server: change objects packed for the delta rule (meanwhile)', [['PackedChanges']]),
    ('server: the fingerprint (meanwhile)', [['DeltaFingerprint']]),
    ('client: the request encoded (meanwhile)', [['MadeMeanwhile', 'DeltaBinary']]),
    ('client: validated (delta rule, foreign keys)', [['RemoteDataAdapter.prepare', 'LocalDataAdapter'],
                                                     ['RemoteDataAdapter.prepare', 'DeltaProcessor']]),
    ('client: the delta made', [['RemoteDataAdapter.prepare']]),
    ('client: HTTP', [['HTTPTransport']]),
    ('server: the request decoded', [['decodeRequest']]),
    ('server: the answer and its record', [['sendingBackWhatDiffers'], ['ApplyLog'], ['DataServiceRoutes', 'DeltaBinary.encode']]),
    ('server: the rows stored (SQL)', [['SQLDeltaStore']]),
    ('server: the edits replayed (row rules)', [['EditReplay']]),
    ('server: the delta processed (delta rule, checks)', [['DeltaProcessor']]),
    ('server: the stored rows read', [['loadRows']]),
    ('server: the rest of the apply', [['DataService']]),
    ('HTTP server (Hummingbird, NIO)', [['Hummingbird'], ['NIO']]),
]


DICTIONARIES = (r'Dictionary|Hash|_NativeSet|Set<', "Swift's dictionaries, sets and hashing")
# A frame with no symbol outside the kernel and JavaScriptCore's library: mostly JavaScript's compiled code.
UNKNOWN = (r'^\[unknown\]$', "JavaScript's compiled code / unknown")
FAMILIES = [
    # (libraries, [(symbol pattern, family)], the family of the library's other symbols)
    (['kernel'], [], 'kernel'),
    (['javascriptcore'], [], 'JavaScriptCore'),
    (['perf-', '[unknown]'], [], UNKNOWN[1]),
    (['libsqlite3'], [], 'SQLite'),
    (['libc.so', 'ld-linux'], [UNKNOWN, (r'malloc|free|_int_|realloc|calloc|tcache', 'malloc and free'),
                               (r'mem(cpy|move|set|cmp)', 'memcpy, memmove, memset, memcmp')], 'the C library, other'),
    (['libswiftCore', 'libswift_Concurrency'], [UNKNOWN, (r'retain|release|RefCount|dealloc|Dealloc', "Swift's reference counting and deallocation"),
                                                DICTIONARIES,
                                                (r'[Mm]etadata|[Cc]ast|conforms|Conformance|Generic|Tuple', "Swift's metadata and dynamic casts")],
     "Swift's runtime and standard library, other"),
    (['Foundation'], [UNKNOWN], 'Foundation'),
    # Relata's own code, where the standard library's generic code is specialized and inlined.
    ([''], [UNKNOWN, DICTIONARIES], 'Relata (and what the compiler inlined into it)'),
]


def family(leaf):
    symbol, _, library = leaf.rpartition(' (')
    symbol = symbol.split(' ', 1)[1] if ' ' in symbol else symbol
    for libraries, patterns, otherwise in FAMILIES:
        if any(name in library for name in libraries):
            return next((name for pattern, name in patterns if re.search(pattern, symbol)), otherwise)


def kernel_work(stack):
    text = '\n'.join(stack)
    if 'exc_page_fault' in text:
        return 'page faults (memory touched for the first time)'
    if 'clock_gettime' in text:
        return "reading a thread's CPU clock (JavaScriptCore's time limit, on each entry)"
    if re.search(r'madvise|mmap|munmap|mprotect|brk', text):
        return 'mapping, unmapping and protecting memory'
    if re.search(r'sendto|recvfrom|sendmsg|recvmsg|writev|readv|epoll|tcp_|__libc_write|__libc_read|ksys_write|ksys_read', text):
        return 'sockets and files'
    return 'the rest (scheduling, interrupts, ...)'


def samples(path):
    stack, header = [], None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if not line.strip():
            if header is not None and stack:
                match = re.match(r'\S+\s+(\d+)\s+([\d.]+):', header)
                if match:
                    yield match.group(1), float(match.group(2)), stack
            stack, header = [], None
        elif line.startswith(('\t', ' ')):
            stack.append(line.strip())
        else:
            header, stack = line, []


def main():
    path = sys.argv[1]
    hertz = float(sys.argv[2]) if len(sys.argv) > 2 else 250
    recorded = list(samples(path))
    # The rounds: from an edit that follows a fold-back (or the start) to the last fold-back before the next edit.
    rounds, start, last_fold, state = [], None, None, 'idle'
    for thread, time, stack in sorted(recorded, key=lambda sample: sample[1]):
        text = '\n'.join(stack)
        if 'incrementQuantities' in text and state != 'editing':
            if start is not None and last_fold is not None:
                rounds.append((start, last_fold))
            start, last_fold, state = time, None, 'editing'
        elif 'RemoteDataAdapter.deliver' in text and start is not None:
            last_fold, state = time, 'folding'
    if start is not None and last_fold is not None:
        rounds.append((start, last_fold))
    inside = sorted(((thread, time, stack) for thread, time, stack in recorded if any(a <= time <= b for a, b in rounds)),
                    key=lambda sample: (sample[0], sample[1]))
    total = len(inside)
    if total == 0:
        sys.exit('no round found: was this a profile of RELATA_PROFILE=endtoend?')
    wall = sum(b - a for a, b in rounds)
    print(f'{len(rounds)} rounds, {wall * 1000 / len(rounds):.0f} ms each on average; '
          f'{total} samples in them, {total / hertz * 1000 / len(rounds):.0f} ms of CPU a round')
    families = collections.Counter(family(stack[0]) for _, _, stack in inside)
    kernel = collections.Counter(kernel_work(stack) for _, _, stack in inside if family(stack[0]) == 'kernel')
    phases, guessed = collections.Counter(), collections.Counter()
    # A stack cut short (JavaScriptCore's compiled code has no unwinding information) is put in
    # the phase its thread was in: that of the thread's last sample with a known phase, if it
    # was taken at most 20 ms before.
    last = {}
    for thread, time, stack in inside:
        text = '\n'.join(stack)
        phase = next((name for name, alternatives in PHASES
                      if any(all(frame in text for frame in frames) for frames in alternatives)), None)
        if phase is not None:
            last[thread] = (time, phase)
        elif thread in last and time - last[thread][0] <= 0.02:
            phase = last[thread][1]
            guessed[phase] += 1
        else:
            phase = 'other (a stack cut short, or no phase named)'
        phases[phase] += 1
    per_round = lambda count: f'{count / hertz * 1000 / len(rounds):.0f} ms'
    print()
    print('| family (innermost frame) | CPU a round | share |')
    print('|---|---|---|')
    for name, count in families.most_common():
        print(f'| {name} | {per_round(count)} | {100 * count / total:.1f}% |')
    print()
    print('| of the kernel | CPU a round |')
    print('|---|---|')
    for name, count in kernel.most_common():
        print(f'| {name} | {per_round(count)} |')
    print()
    print("| phase | CPU a round | share | of which stacks cut short, put in their thread's phase |")
    print('|---|---|---|---|')
    for name, count in phases.most_common():
        print(f'| {name} | {per_round(count)} | {100 * count / total:.1f}% | {per_round(guessed[name])} |')

if __name__ == '__main__':
    main()
