import CarSim
import DriveBluetooth
import DriveCore
import DriveLink
import DriveSystem
import Logging

/// Makes the link a `LinkURL` names.
public enum LinkFactory {
    /// A link for `url` on `loop` (not started yet). An `rfcomm://NAME` link is resolved here, through
    /// bluetoothd on a private loop, before `loop` runs (`notice` gets what was found; by default a
    /// notice line on stderr); a name that finds no device, or several, throws the sentence.
    public static func make(
        url: LinkURL, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions(),
        notice: (String) -> Void = LinkFactory.noticeOnStandardError
    ) throws -> any CarLink {
        switch url {
        case .rfcommDevice(let name, let channel):
            let resolved = try BluetoothTool.resolveLink(name: name, channel: channel, notice: notice)
            return try make(url: resolved, loop: loop, encoder: encoder, options: options, notice: notice)
        case .rfcomm(let address, let channel):
            return RFCOMMLink(
                connector: RFCOMMConnector(address: address, channel: channel), loop: loop, encoder: encoder,
                options: options)
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
            return SimulatedCarLink(simulatedOn: loop, encoder: encoder)
        }
    }

    /// Writes `notice` as carbridge's log does (the session's logger is not up yet).
    public static func noticeOnStandardError(_ text: String) {
        _ = BoundedWriter.standardError.write(ConsoleLogHandler.line(level: .notice, label: "carbridge", message: text))
    }

    /// Parses `text` and makes its link; throws `LinkURLError` for a bad URL.
    public static func make(
        url text: String, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions()
    ) throws -> any CarLink {
        try make(url: LinkURL(parsing: text), loop: loop, encoder: encoder, options: options)
    }
}
