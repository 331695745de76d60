// carbridge.toml through the real loader, as check-config does: CarbridgeConfig.load (TOML via TOMLKit, types,
// ranges, link.url, and the evdev names of axes and buttons, actions, long presses), every problem reported.
import DriveConfig
import DriveCore
import DriveInput
import DriveLink
import FuzzSupport

private let names = EventCodeNames()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let lineCount = text.utf8.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
    do {
        let config = try CarbridgeConfig.load(text: text, file: "fuzz.toml", resolver: names)
        _ = config.mapperSettings
        fuzzCheck((try? LinkURL(parsing: config.link.url)) != nil, "accepted link.url \(config.link.url) that run rejects")
        let drive = config.drive
        fuzzCheck((10...240).contains(drive.maxSpeed) && drive.maxSpeed % 10 == 0, "max_speed \(drive.maxSpeed)")
        fuzzCheck(drive.hysteresisDegrees.isFinite && (0...20).contains(drive.hysteresisDegrees), "hysteresis")
        let steering = config.steering
        for value in [steering.deadzone, steering.expo, steering.neutralDegrees, steering.sensitivity,
                      steering.smoothingMilliseconds, steering.sampleRateHertz] {
            fuzzCheck(value.isFinite, "a steering value is not finite: \(value)")
        }
        fuzzCheck(TiltAxes(parsing: steering.tiltAxes.description) == steering.tiltAxes, "tilt_axes \(steering.tiltAxes)")
    } catch {
        var previous = 0
        for error in error.errors {
            fuzzCheck(error.file == "fuzz.toml", "error without the file: \(error)")
            if let line = error.line {
                fuzzCheck(line >= 1 && line <= lineCount + 1, "line \(line) outside the \(lineCount)-line file: \(error)")
                fuzzCheck(line >= previous, "errors not in file order: \(error)")
                previous = line
            } else {
                previous = Int.max
            }
            _ = error.description
        }
    }
    return 0
}
