import DriveCore
import DriveSystem
import DriveWebProtocol

/// Where the event loop and the web side meet (thread-safe; every critical section is a few value
/// copies, so the loop never waits on the web side for longer than that).
///
/// Out: the loop `publish`es each new `DashboardState` (a value; no formatting on the loop) and every
/// subscribed browser connection is woken through its own one-slot stream (`bufferingNewest(1)`:
/// wake-ups coalesce, nothing queues up behind a slow browser). The connection then takes the newest
/// state when its `SnapshotCoalescer` lets it, and the JSON is made once per version, on the web side.
///
/// In: `send` hands a client's event to the loop through its mailbox (`EventLoop.submit`: a locked
/// append and an eventfd write), where `DashboardLoop` applies it to the bridge.
package final class DashboardHub: @unchecked Sendable {
    /// What the web side tells the loop.
    package enum ClientEvent: Sendable {
        /// A valid message from a connection with controls.
        case message(ClientMessage)
        /// A connection with controls opened; `label` names it to the others ("phone 2 (Android)").
        case connected(label: String)
        /// The connection (with controls) is gone.
        case disconnected
        /// A phone spent the join code (`GET /join`): show the next one.
        case joinCodeSpent
    }

    /// What the loop tells one connection only.
    package struct Reply: Hashable, Sendable {
        /// What kind of words.
        package enum Kind: String, Hashable, Sendable {
            /// A control of this connection was refused (`{"type":"rejected",…}`).
            case rejected
            /// This connection's driving was stopped (`{"type":"stopped",…}`): its sensor or its page went silent.
            case stopped
        }

        /// The kind, the message's `type`.
        package var kind: Kind
        /// The sentence.
        package var text: String

        /// Creates a reply.
        package init(_ kind: Kind, _ text: String) {
            self.kind = kind
            self.text = text
        }
    }

    /// The join code as the page shows it (`[dashboard] join`).
    package struct JoinPage: Hashable, Sendable {
        /// The URL a phone opens.
        package var url: String
        /// Its QR code as an SVG image.
        package var svg: String
    }

    private let lock = ConditionLock()
    private var state: DashboardState?
    private var version: UInt64 = 0
    private var cachedJSON: (version: UInt64, at: Instant, text: String)?
    private var subscribers: [Int: AsyncStream<Void>.Continuation] = [:]
    private var sessionsOfClients: [Int: String] = [:]
    private var revokedClients: Set<Int> = []
    private var join: JoinPage?
    private var joinVersion = 0
    private var nextClient = 1
    /// Words from the loop waiting for their connection, per connection.
    private var replies: [Int: [Reply]] = [:]
    private let deliver: @Sendable (Int, ClientEvent) -> Void

    /// Creates a hub whose client events go to `deliver` (the loop's mailbox).
    package init(deliver: @escaping @Sendable (Int, ClientEvent) -> Void) {
        self.deliver = deliver
    }

    // MARK: loop side

    /// A new state (loop thread): stored, and every connection woken.
    package func publish(_ newState: DashboardState) {
        lock.lock()
        state = newState
        version &+= 1
        let waiting = Array(subscribers.values)
        lock.unlock()
        for continuation in waiting { continuation.yield() }
    }

    /// A new join code for the page (loop thread; nil: none shown): every connection is woken.
    package func publishJoin(_ page: JoinPage?) {
        lock.lock()
        join = page
        joinVersion += 1
        let waiting = Array(subscribers.values)
        lock.unlock()
        for continuation in waiting { continuation.yield() }
    }

    /// Takes controls from the connections that hold one of `sessions` (a joined phone at the end of its
    /// turn) and wakes them, so each tells its browser at once; returns their ids.
    package func revoke(sessions: [String]) -> [Int] {
        guard !sessions.isEmpty else { return [] }
        lock.lock()
        let clients = sessionsOfClients.filter { sessions.contains($0.value) }.map(\.key)
        revokedClients.formUnion(clients)
        let waiting = clients.compactMap { subscribers[$0] }
        lock.unlock()
        for continuation in waiting { continuation.yield() }
        return clients
    }

    // MARK: web side

    /// True when connection `id` lost its controls (`revoke`).
    package func isRevoked(_ id: Int) -> Bool { lock.withLock { revokedClients.contains(id) } }

    /// The join code for the page and its version (moves whenever it changes).
    package func latestJoin() -> (version: Int, page: JoinPage?) { lock.withLock { (joinVersion, join) } }

    /// A new connection's id, its wake-ups (the first one is already there: send the current state)
    /// and their continuation (for the connection's own delayed wake-ups).
    /// `session`: the session the connection holds, if any (for `revoke`).
    package func subscribe(session: String? = nil) -> (id: Int, wakeups: AsyncStream<Void>, poke: AsyncStream<Void>.Continuation) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        continuation.yield()
        lock.lock()
        let id = nextClient
        nextClient += 1
        subscribers[id] = continuation
        if let session { sessionsOfClients[id] = session }
        lock.unlock()
        return (id, stream, continuation)
    }

    /// The connection `id` is gone (its stream ends).
    package func unsubscribe(_ id: Int) {
        lock.lock()
        let continuation = subscribers.removeValue(forKey: id)
        sessionsOfClients[id] = nil
        revokedClients.remove(id)
        replies[id] = nil
        lock.unlock()
        continuation?.finish()
    }

    /// A refusal for connection `client` (loop thread): kept (the newest few) and the connection woken.
    package func reply(_ reason: String, to client: Int) { tell(Reply(.rejected, reason), to: client) }

    /// Words for connection `client` only (loop thread): kept (the newest few) and the connection woken.
    package func tell(_ reply: Reply, to client: Int) {
        lock.lock()
        guard let continuation = subscribers[client] else {
            lock.unlock()
            return
        }
        var waiting = replies[client] ?? []
        waiting.append(reply)
        if waiting.count > 4 { waiting.removeFirst(waiting.count - 4) }
        replies[client] = waiting
        lock.unlock()
        continuation.yield()
    }

    /// The words waiting for connection `client`, oldest first (taken).
    package func takeReplies(_ client: Int) -> [Reply] {
        lock.withLock { replies.removeValue(forKey: client) ?? [] }
    }

    /// How many connections are subscribed.
    package var connectionCount: Int { lock.withLock { subscribers.count } }

    /// The newest state's version and coalescing key (nil before the first publish).
    package func latest() -> (version: UInt64, key: SnapshotCoalescer.Key)? {
        lock.withLock { state.map { (version, $0.coalescingKey) } }
    }

    /// The newest state as JSON (made at most once per version, or again after a second while the
    /// link's retry countdown runs).
    package func latestJSON(now: Instant) -> String? {
        lock.lock()
        guard let current = state else {
            lock.unlock()
            return nil
        }
        let currentVersion = version
        if let cached = cachedJSON, cached.version == currentVersion,
            current.retryAt == nil || now.duration(since: cached.at) < .milliseconds(200)
        {
            lock.unlock()
            return cached.text
        }
        lock.unlock()
        let text = current.json(now: now)
        lock.withLock { if version == currentVersion { cachedJSON = (currentVersion, now, text) } }
        return text
    }

    /// Hands `event` from connection `client` to the loop.
    package func send(_ event: ClientEvent, from client: Int) { deliver(client, event) }
}
