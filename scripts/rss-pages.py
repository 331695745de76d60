#!/usr/bin/env python3
"""Which of a running binary's own pages are resident, by module and by section (scripts/rss.sh runs it).

    scripts/rss-pages.py PID BINARY

A statically linked carbridge (`--static-swift-stdlib`) is one mapping in /proc/PID/smaps, the Swift
runtime, Foundation, NIO and carbridge's modules all in it. This reads /proc/PID/pagemap (root) for the
binary's mappings, takes every present page back to its ELF address, and charges it to the ELF section
it lies in and to the module of the symbols in it (the module a Swift symbol's mangling names, toml++,
ICU, the Swift runtime...; a page is charged to the module with the most symbol bytes in it, or to its
section's name where no symbol covers it, e.g. the Swift metadata sections). Needs binutils (readelf, nm).
"""
import bisect
import collections
import os
import re
import struct
import subprocess
import sys

PAGE = 4096


def module_of(symbol):
    """The library or Swift module a symbol belongs to, from its (mangled) name."""
    if symbol.startswith(("$s", "_$s")):
        rest = symbol[symbol.index("$s") + 2:]
        m = re.match(r"(\d+)", rest)
        if m:
            length = int(m.group(1))
            name = rest[len(m.group(1)):len(m.group(1)) + length]
            return name
        return "Swift (stdlib)"
    if symbol.startswith("_ZN4toml"):
        return "toml++"
    if symbol.startswith(("_ZN5swift", "swift_", "_swift_", "_ZN12_GLOBAL__N_1")):
        return "Swift runtime"
    if re.match(r"_ZN\d*icu_", symbol) or re.match(r"u[a-z]*_\w+_\d+$", symbol) or "_icu_" in symbol:
        return "ICU"
    if symbol.startswith(("_ZSt", "_ZNSt", "_ZNKSt", "_ZNSt3__1", "_ZTVSt", "_ZTISt", "_ZTSSt", "_ZN9__gnu_cxx")):
        return "C++ standard library (inlined)"
    if symbol.startswith("c_nio_"):
        return "NIO (C)"
    if symbol.startswith(("cb_", "ctoml_")):
        return "carbridge C shims"
    return "other C/C++"


def main():
    pid, binary = sys.argv[1], sys.argv[2]
    # Snapshot first (the process keeps running; nm on a large binary takes a while): the binary's
    # mappings and their pagemap entries (one 8-byte entry per page; a bounded number per read).
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == binary:
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                maps.append((lo, hi, int(fields[2], 16), fields[1]))
    entries = {}
    fd = os.open(f"/proc/{pid}/pagemap", os.O_RDONLY)
    try:
        for lo, hi, _, _ in maps:
            want = (hi - lo) // PAGE * 8
            data = b""
            while len(data) < want:
                chunk = os.pread(fd, want - len(data), lo // PAGE * 8 + len(data))
                if not chunk:
                    break
                data += chunk
            entries[lo] = data
    finally:
        os.close(fd)

    # Sections: (start, end, name) in ELF addresses.
    sections = []
    for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m and int(m.group(2), 16) != 0:
            start, size = int(m.group(2), 16), int(m.group(4), 16)
            sections.append((start, start + size, m.group(1)))
    # Loadable segments: file offset → ELF address.
    segments = []
    for line in subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        m = re.match(r"\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)", line)
        if m:
            segments.append(tuple(int(g, 16) for g in m.groups()))  # offset, vaddr, filesz, memsz
    # Symbols with sizes, for the module of each page.
    symbols = []
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            symbols.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    symbols.sort()
    starts = [s[0] for s in symbols]

    # The load bias: runtime address - ELF address.
    first = min(maps)
    seg0 = min(segments, key=lambda s: s[0])
    bias = first[0] - (seg0[1] - seg0[0] + first[2])

    by_module = collections.Counter()
    by_section = collections.Counter()
    dirty_by_module = collections.Counter()
    total = 0
    for lo, hi, _, perms in maps:
        data = entries[lo]
        for i in range(len(data) // 8):
            (entry,) = struct.unpack_from("<Q", data, i * 8)
            if not entry >> 63 & 1:
                continue
            total += 1
            anonymous = not entry >> 61 & 1
            page = lo + i * PAGE - bias
            section = next((n for s, e, n in sections if s < page + PAGE and e > page), "(no section)")
            # Symbol bytes in this page, per module.
            weights = collections.Counter()
            j = max(0, bisect.bisect_right(starts, page) - 1)
            while j < len(symbols) and symbols[j][0] < page + PAGE:
                s, size, name = symbols[j]
                overlap = min(s + max(size, 1), page + PAGE) - max(s, page)
                if overlap > 0:
                    weights[module_of(name)] += overlap
                j += 1
            module = weights.most_common(1)[0][0] if weights else f"[{section}]"
            by_module[module] += 1
            by_section[section] += 1
            if anonymous:
                dirty_by_module[module] += 1
    kib = PAGE // 1024
    print(f"binary's resident pages: {total * kib} kB (dirty/anonymous: {sum(dirty_by_module.values()) * kib} kB)")
    print("by module (the symbols' module; [section] where no symbol covers the page):")
    for module, count in by_module.most_common():
        if count * kib >= 16:
            print(f"  {count * kib:7d} kB  ({dirty_by_module[module] * kib:5d} kB dirty)  {module}")
    rest = sum(c for c in by_module.values() if c * kib < 16)
    print(f"  {rest * kib:7d} kB  the rest (each < 16 kB)")
    print("by section:")
    for section, count in by_section.most_common():
        if count * kib >= 16:
            print(f"  {count * kib:7d} kB  {section}")


if __name__ == "__main__":
    main()
