import DriveCore
import DriveInputModel
import DriveSystem
import Glibc

/// One pad's light and battery, on a thread of its own: it finds them (`PadSysfs`), reads the light's
/// original values, shows the newest colour it was given (`show`: an older colour not written yet is skipped),
/// reads the battery at once and every `Options.batteryInterval`, and, when closed, writes the original values
/// back and ends. What it finds and reads goes to the loop through its mailbox (`Report`), the battery only
/// when the reading changed.
///
/// A sysfs write goes to the pad's driver, which may take its time (a Bluetooth output report) or fail (no
/// udev rule: `EACCES`): so none of it happens on the event loop, and the loop never waits for it. A write
/// refused for lack of permission is tried again for `Options.permissionWindow` after the pad opened (udev
/// runs the LED rule while carbridge already opens the pad); after that, or after any other error, the worker
/// reports it once (`lightsFailed`) and leaves the pad's lights alone, restoring only what it had written.
public final class PadSysfsWorker: @unchecked Sendable {
    /// Where to look and how often.
    public struct Options: Sendable {
        /// Where sysfs is (a test's fixture tree).
        public var sysfsRoot: String
        /// Drive the light (`[feedback] lights`).
        public var lights: Bool
        /// Read the battery.
        public var battery: Bool
        /// How often the battery is read.
        public var batteryInterval: Duration
        /// How long after the start a write refused for lack of permission is tried again.
        public var permissionWindow: Duration
        /// The pause before such a write is tried again.
        public var retryInterval: Duration

        /// Options; by default the real sysfs, lights and battery, the battery every 30 s.
        public init(
            sysfsRoot: String = "/sys", lights: Bool = true, battery: Bool = true, batteryInterval: Duration = .seconds(30),
            permissionWindow: Duration = .seconds(3), retryInterval: Duration = .milliseconds(250)
        ) {
            self.sysfsRoot = sysfsRoot
            self.lights = lights
            self.battery = battery
            self.batteryInterval = batteryInterval
            self.permissionWindow = permissionWindow
            self.retryInterval = retryInterval
        }
    }

    /// What the worker tells the loop.
    public enum Report: Sendable {
        /// What it found of the pad (what it will use: no light when `Options.lights` is off or its original
        /// values could not be read); nil when the node has no input device in sysfs. Always the first report.
        case found(PadSysfs?)
        /// The battery's reading: the first, then each that differs from the one before.
        case battery(PadBatteryReading)
        /// Writing `path` failed with `errno`: the lights are left alone from now on. Not reported for a pad
        /// that went away meanwhile (`ENODEV`, `ENOENT`).
        case lightsFailed(path: String, errno: Int32)
    }

    /// The pad's evdev node.
    public let eventNode: String
    private let options: Options
    private let lock = ConditionLock()
    /// The newest colour asked for (lock).
    private var wanted: LightColour?
    /// `close()` was called (lock).
    private var closing = false
    /// The thread has ended, the originals written back (lock).
    private var finished = false

    private init(eventNode: String, options: Options) {
        self.eventNode = eventNode
        self.options = options
    }

    /// Starts the worker of the pad at `eventNode`; `report` runs on `loop`'s thread. Call on that thread. Nil
    /// when no thread could be started (the pad then drives without lights or battery).
    public static func start(
        eventNode: String, options: Options = Options(), loop: EventLoop, report: @escaping (Report) -> Void
    ) -> PadSysfsWorker? {
        loop.assertOnLoopThread()
        let worker = PadSysfsWorker(eventNode: eventNode, options: options)
        let deliver = LoopBound(report)
        let submitter = loop.submitter
        do {
            try BackgroundThread.start {
                worker.run { report in submitter.submit { deliver.value(report) } }
            }
        } catch {
            return nil
        }
        return worker
    }

    /// Shows `colour` as soon as the thread gets to it (never waiting); a newer colour replaces one not yet shown.
    public func show(_ colour: LightColour) {
        lock.withLock {
            wanted = colour
            lock.broadcast()
        }
    }

    /// Ends the worker: the thread writes the light's original values back and stops (never waiting).
    public func close() {
        lock.withLock {
            closing = true
            lock.broadcast()
        }
    }

    /// True once the thread has ended (after `close`, the originals written back).
    public var isFinished: Bool { lock.withLock { finished } }

    /// Waits until the thread has ended or `deadline` (CLOCK_MONOTONIC) passed; false when it has not ended.
    /// For a run's end, after the loop stopped: a process that exits at once would leave the pad's light in
    /// carbridge's colour.
    @discardableResult
    public func finish(waitingUntil deadline: Instant) -> Bool {
        lock.withLock {
            while !finished {
                if !lock.wait(until: deadline) { break }
            }
            return finished
        }
    }

    private static func now() -> Instant { Instant(nanoseconds: MonotonicClock.nanoseconds()) }

    /// The thread.
    private func run(reporting report: (Report) -> Void) {
        defer {
            lock.withLock {
                finished = true
                lock.broadcast()
            }
        }
        var found = PadSysfs.find(eventNode: eventNode, sysfsRoot: options.sysfsRoot)
        if !options.lights { found?.lights = nil }
        if !options.battery { found?.battery = nil }
        // The original values, read before anything is written; a light whose values cannot be read is left alone.
        var originals: [PadLightFiles.Write] = []
        for path in found?.lights?.files ?? [] {
            guard let text = SysfsFile.readText(path) else {
                found?.lights = nil
                originals = []
                break
            }
            originals.append(PadLightFiles.Write(path: path, text: text))
        }
        report(.found(found))
        guard let found, found.lights != nil || found.battery != nil else { return }
        let globalOff = found.lights?.globalFile.map { file in originals.first { $0.path == file }?.text == "0" } ?? false
        let started = Self.now()
        var lights = found.lights
        var shown: LightColour?
        var retryAt: Instant?
        var written: Set<String> = []
        var nextReading: Instant? = found.battery == nil ? nil : started
        var lastReading: PadBatteryReading?
        while true {
            // Wait for a colour not shown yet (once any retry is due), the battery's time, or the close.
            var colour: LightColour?
            let closed = lock.withLock { () -> Bool in
                while !closing {
                    let now = Self.now()
                    let lightDue = lights != nil && wanted != nil && wanted != shown
                    if (lightDue && (retryAt.map({ now >= $0 }) ?? true)) || (nextReading.map({ now >= $0 }) ?? false) {
                        colour = lightDue ? wanted : nil
                        return false
                    }
                    if let deadline = Instant.earliest(nextReading, lightDue ? retryAt : nil) {
                        lock.wait(until: deadline)
                    } else {
                        lock.wait()
                    }
                }
                return true
            }
            if closed { break }
            let now = Self.now()
            if let due = nextReading, now >= due, let battery = found.battery {
                if let reading = PadBatteryReading.read(battery), reading != lastReading {
                    lastReading = reading
                    report(.battery(reading))
                }
                // On the grid from the start; a late wake-up skips the missed readings.
                var next = due.advanced(by: options.batteryInterval)
                while next <= now { next = next.advanced(by: options.batteryInterval) }
                nextReading = next
            }
            guard let colour, let files = lights, retryAt.map({ now >= $0 }) ?? true else { continue }
            retryAt = nil
            var failure: (path: String, errno: Int32)?
            for write in files.writes(for: colour, globalOff: globalOff) {
                let error = SysfsFile.write(write.path, write.text)
                if error != 0 {
                    failure = (write.path, error)
                    break
                }
                written.insert(write.path)
            }
            guard let failure else {
                shown = colour
                continue
            }
            if failure.errno == EACCES || failure.errno == EPERM, now < started.advanced(by: options.permissionWindow) {
                retryAt = now.advanced(by: options.retryInterval)
                continue
            }
            lights = nil
            if failure.errno != ENODEV && failure.errno != ENOENT { report(.lightsFailed(path: failure.path, errno: failure.errno)) }
        }
        // Back as the pad was, in the order written (a multicolor LED's intensities before its brightness); a pad
        // that went away fails here, which changes nothing.
        for original in originals where written.contains(original.path) {
            _ = SysfsFile.write(original.path, original.text)
        }
    }
}
