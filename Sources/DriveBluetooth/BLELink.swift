import DriveCore
import DriveLink
import DriveSystem

/// A link to a Bluetooth Low Energy car: a `BLETransport` under the `LinkSupervisor`, the same lifecycle
/// (connect timeout, back-off, flush, shutdown, stall statistics) as every stream link.
package typealias BLELink = SupervisedLink<BLETransport>

extension SupervisedLink where Transport == BLETransport {
    /// Which car.
    package typealias Target = BLETransport.Target

    /// A link to `target` (nothing happens until `start()`); `notice` hears what it finds until a bridge
    /// takes `onNotice`; `bus` makes its D-Bus connection (the system bus when nil).
    package convenience init(
        target: Target, loop: EventLoop, encoder: FrameEncoder = FrameEncoder(), options: LinkOptions = LinkOptions(),
        notice: ((String) -> Void)? = nil, bus: BLETransport.BusMaker? = nil
    ) {
        self.init(
            transport: BLETransport(target: target, loop: loop, encoder: encoder, options: options, bus: bus),
            loop: loop, connectTimeout: options.connectTimeout)
        onNotice = notice
    }
}
