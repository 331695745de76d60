/// The run's one list of subscribers, told every `RunEvent` in the order they subscribed.
///
/// Events go one way: the bridge, the input devices and the feedback publish; the subscribers only
/// read. A subscriber that publishes while it is being told (the feedback answering a state with a
/// cue) does not interrupt the others: its event is queued and told to everyone, in order, once the
/// current one has been told to all. Loop thread only.
public final class RunEvents {
    /// The subscribers, in the order they are told.
    public private(set) var subscribers: [any RunSubscriber] = []
    /// Events published while another is being told.
    private var queued: [RunEvent] = []
    private var publishing = false

    /// An empty list.
    public init() {
        queued.reserveCapacity(8)
    }

    /// Adds `subscriber` at the end of the list (it is kept until `unsubscribe`).
    public func subscribe(_ subscriber: any RunSubscriber) {
        subscribers.append(subscriber)
    }

    /// Removes `subscriber` from the list.
    public func unsubscribe(_ subscriber: any RunSubscriber) {
        subscribers.removeAll { $0 === subscriber }
    }

    /// Empties the list (the run is over: subscribers that hold the bridge are let go).
    public func removeAll() {
        subscribers.removeAll()
    }

    /// Tells `event` to every subscriber, in order (after the event being told now, if any).
    public func publish(_ event: RunEvent) {
        if publishing { return queued.append(event) }
        publishing = true
        tell(event)
        if !queued.isEmpty { tellQueued() }
        publishing = false
    }

    private func tellQueued() {
        var index = 0
        while index < queued.count {
            tell(queued[index])
            index += 1
        }
        queued.removeAll(keepingCapacity: true)
    }

    private func tell(_ event: RunEvent) {
        for subscriber in subscribers { subscriber.receive(event) }
    }
}
