# Sourced by the scripts that build release binaries (package.sh, bench.sh, run.sh, test.sh's kernel stage):
#   . scripts/release-flags.sh; swift build -c release "${release_flags[@]}" ...
# The release link flags, given on the command line because Package.swift has no unsafeFlags:
# - lld, so that the two below are available;
# - --no-export-dynamic: --static-swift-stdlib exports every symbol, which makes each pointer in the Swift
#   metadata a symbol relocation the loader resolves against a large symbol table at every start; unexported,
#   they are relative relocations. Nothing looks symbols up in the executable (no dlsym, no swift-backtrace
#   in a static binary);
# - -z pack-relative-relocs: those relative relocations packed into .relr.dyn (DT_RELR, glibc >= 2.36,
#   Debian 12) instead of .rela.dyn, fewer pages to read and dirty at start.
# shellcheck disable=SC2034  # used by the sourcing script
release_flags=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs -Xlinker --no-export-dynamic)
