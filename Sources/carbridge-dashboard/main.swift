import CarbridgeCommands
import DriveDashboard
import DriveInput

// `carbridge-dashboard`: the same commands as `carbridge`, linked with the web dashboard, which
// `carbridge run` execs when `[dashboard] listen` or `--dashboard` is set (DashboardBuild).
DashboardBuild.factory = { config, logger in
    Dashboard(
        settings: config.dashboard, maxSpeed: config.drive.maxSpeed, logger: logger, configFile: config.file,
        resolver: EventCodeNames(),
        phone: SteeringGuard.PhoneSettings(
            tilt: PhoneTilt.Settings(config: config), maxSpeed: config.drive.maxSpeed, hysteresis: config.throttle.hysteresis,
            inputTimeout: .milliseconds(Int64(config.steering.inputTimeoutMilliseconds))))
}
Carbridge.main()
