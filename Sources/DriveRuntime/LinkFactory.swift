import CarSim
import DriveCore
import DriveLink
import DriveSystem

/// Makes the link a `LinkURL` names.
public enum LinkFactory {
    /// A link for `url` on `loop` (not started yet).
    public static func make(
        url: LinkURL, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions()
    ) throws -> any CarLink {
        switch url {
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

    /// Parses `text` and makes its link; throws `LinkURLError` for a bad URL.
    public static func make(
        url text: String, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions()
    ) throws -> any CarLink {
        try make(url: LinkURL(parsing: text), loop: loop, encoder: encoder, options: options)
    }
}
