/// How a link's flush (before a suspend or at shutdown) ended.
public enum FlushResult: Hashable, Sendable, CustomStringConvertible {
    /// Every queued frame left carbridge and the kernel's output queue drained (TCP: the car
    /// acknowledged it; RFCOMM: handed to the radio; tty: sent).
    case delivered
    /// The link was not up: nothing could be sent.
    case linkDown
    /// The flush window ran out with frames still queued (they were discarded).
    case timedOut

    public var description: String {
        switch self {
        case .delivered: return "delivered"
        case .linkDown: return "not sent: the link is down"
        case .timedOut: return "not confirmed: the flush window ran out"
        }
    }
}
