// carbridge.toml through the real loader: CarbridgeConfig.parse (TOML via TOMLKit, types, ranges, link.url)
// and MappingConfiguration (evdev names of axes and buttons, actions, long presses), as check-config does.
import DriveCore
import DriveLink
import DriveRuntime
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    let lineCount = text.utf8.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
    do {
        let config = try CarbridgeConfig.parse(text: text, file: "fuzz.toml")
        _ = try MappingConfiguration.mapperSettings(for: config)
        fuzzCheck((try? LinkURL(parsing: config.link.url)) != nil, "accepted link.url \(config.link.url) that run rejects")
        let drive = config.drive
        fuzzCheck((10...240).contains(drive.maxSpeed) && drive.maxSpeed % 10 == 0, "max_speed \(drive.maxSpeed)")
        fuzzCheck(drive.hysteresisDegrees.isFinite && (0...20).contains(drive.hysteresisDegrees), "hysteresis")
        let steering = config.steering
        for value in [steering.deadzone, steering.expo, steering.neutralDegrees, steering.sensitivity,
                      steering.smoothingMilliseconds, steering.sampleRateHertz] {
            fuzzCheck(value.isFinite, "a steering value is not finite: \(value)")
        }
        for binding in config.buttons + config.longPressButtons {
            fuzzCheck(CarbridgeConfig.actions.contains(binding.action), "action \(binding.action)")
        }
    } catch let error as ConfigError {
        fuzzCheck(error.file == "fuzz.toml", "error without the file: \(error)")
        if let line = error.line {
            fuzzCheck(line >= 1 && line <= lineCount + 1, "line \(line) outside the \(lineCount)-line file: \(error)")
        }
        _ = error.description
    } catch {
        fuzzCheck(false, "not a ConfigError: \(error)")
    }
    return 0
}
