/// How a BLE link writes frames to the car's characteristic, chosen from its flags when the link comes up.
package enum BLEWriteMode: Hashable, Sendable, CustomStringConvertible {
    /// `WriteValue(type=request)`, one write at a time: the next starts only once the car acknowledged the
    /// last (ATT Write Response), so no frame can overtake an older one, however many ATT bearers (EATT)
    /// bluetoothd opened. Used whenever the characteristic allows it (HM-10 FFE1, Nordic UART RX do).
    case request
    /// Write commands through the socket `AcquireWrite` handed over, one frame per write, motion frames
    /// paced. For characteristics that take only write-without-response: order then rests on the
    /// module having a single ATT bearer (BLE 4.x modules have no EATT).
    case acquired(fd: Int32)
    /// `WriteValue(type=command)`, one call at a time, motion frames paced: when `AcquireWrite` was refused.
    case command

    /// True when every write waits for the car's acknowledgement.
    package var isAcknowledged: Bool { self == .request }

    package var description: String {
        switch self {
        case .request: return "write requests, one at a time (ordered on every bearer)"
        case .acquired: return "write commands through AcquireWrite"
        case .command: return "write commands through WriteValue"
        }
    }
}
