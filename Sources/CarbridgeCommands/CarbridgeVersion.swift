/// The release number: the one place it is written. `scripts/package.sh` takes the Debian package's
/// version (and its changelog entry) from the release binary's `carbridge --version`, so the package
/// and the binary cannot disagree; a release is this line changed, nothing else.
let carbridgeRelease = "0.1.0"

/// `carbridge --version`: the release, and "(debug build)" when built without optimisation (a debug build
/// is several times slower per input event; the latency scenario of the kernel tests reads this line).
#if DEBUG
let carbridgeVersion = "\(carbridgeRelease) (debug build)"
#else
let carbridgeVersion = carbridgeRelease
#endif
