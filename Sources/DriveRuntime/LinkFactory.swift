import DriveConfig
import DriveBluetooth
import DriveCore
import DriveLink
import DriveSystem
import Logging

/// Makes the link a `LinkURL` names. The simulated car (`sim`) is not a dependency of the runtime: the
/// executable that has one hands it in as `simulatedCar`.
public struct LinkFactory {
    /// Makes the `sim` link on a loop with an encoder; nil: this program has no simulated car.
    public typealias SimulatedCarMaker = (EventLoop, FrameEncoder) -> any CarLink

    /// The `sim` link's maker, if any.
    public var simulatedCar: SimulatedCarMaker?
    /// Where an `rfcomm://NAME` resolution or a BLE link says what it found (by default a notice line on stderr).
    public var notice: (String) -> Void

    /// A factory; without `simulatedCar`, a `sim` link is refused with a sentence that says so.
    public init(
        simulatedCar: SimulatedCarMaker? = nil, notice: @escaping (String) -> Void = LinkFactory.noticeOnStandardError
    ) {
        self.simulatedCar = simulatedCar
        self.notice = notice
    }

    /// A link for `url` on `loop` (not started yet). An `rfcomm://NAME` link is resolved here, through
    /// bluetoothd on a private loop, before `loop` runs; a name that finds no device, or several, throws the
    /// sentence.
    public func make(
        url: LinkURL, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions()
    ) throws -> any CarLink {
        switch url {
        case .rfcommDevice(let name, let channel):
            let resolved = try BluetoothTool.resolveLink(name: name, channel: channel, notice: notice)
            return try make(url: resolved, loop: loop, encoder: encoder, options: options)
        case .rfcomm(let address, let channel):
            return RFCOMMLink(
                connector: RFCOMMConnector(address: address, channel: channel), loop: loop, encoder: encoder,
                options: options)
        case .ble(let address):
            return BLELink(target: .address(address), loop: loop, encoder: encoder, options: options)
        case .bleDevice(let name):
            return BLELink(target: .name(name), loop: loop, encoder: encoder, options: options)
        case .serial(let path, let baud):
            return SerialLink(
                connector: SerialConnector(path: path, baud: baud), loop: loop, encoder: encoder,
                options: options)
        case .tcp(let host, let port):
            return TCPLink(
                connector: TCPConnector(host: host, port: port), loop: loop, encoder: encoder,
                options: options)
        case .stdout:
            return StdoutLink(loop: loop)
        case .sim:
            guard let simulatedCar else {
                throw CarbridgeError("link \"sim\": this program has no simulated car")
            }
            return simulatedCar(loop, encoder)
        }
    }

    /// Parses `text` and makes its link; throws `LinkURLError` for a bad URL.
    public func make(
        url text: String, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions()
    ) throws -> any CarLink {
        try make(url: LinkURL(parsing: text), loop: loop, encoder: encoder, options: options)
    }

    /// The link `config.link.url` names, with the config's terminator and link options.
    public func make(for config: CarbridgeConfig, loop: EventLoop) throws -> any CarLink {
        try make(
            url: LinkURL(parsing: config.link.url), loop: loop, encoder: FrameEncoder(terminator: config.link.terminator),
            options: config.link.options)
    }

    /// Writes `notice` as carbridge's log does (the session's logger is not up yet).
    public static func noticeOnStandardError(_ text: String) {
        _ = BoundedWriter.standardError.write(ConsoleLogHandler.line(level: .notice, label: "carbridge", message: text))
    }
}
