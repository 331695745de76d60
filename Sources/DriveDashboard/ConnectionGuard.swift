import DriveCore
import DriveSystem
import HummingbirdCore
import Logging
import NIOCore

/// The dashboard's limits on a connection before HTTP sees it, at the front of its pipeline (behind TLS, so it
/// reads the request in clear):
///
/// - an address already holding `ConnectionTable.perAddress` connections, or opening them faster than the
///   table's rate, has this one closed at once;
/// - the first request head must be complete within `headTimeout` of the connection (a slowloris client that
///   sends a header line now and then, or nothing at all, or never finishes its TLS handshake, is answered
///   `408` and closed);
/// - a head longer than `headLimit` bytes is answered `431` and closed, before the HTTP parser buffers it.
///
/// After the first head it only passes bytes on and counts the connection until it closes: a keep-alive
/// connection that goes quiet is Hummingbird's idle timeout's, a WebSocket's is its ping's.
final class ConnectionGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The guard's limits.
    struct Limits: Sendable {
        /// The time from the connection to the end of its first request head.
        var headTimeout: TimeAmount = .seconds(10)
        /// The most bytes a request head may take (the request line and every header line).
        var headLimit: Int = 16 * 1024
    }

    /// What the guard did, for the server's log and metrics.
    enum Event: Sendable {
        /// A connection past the address's limit was closed.
        case refused(address: String)
        /// A connection past the address's rate was closed.
        case tooFast(address: String)
        /// A request head was not complete in time.
        case headTimedOut(address: String)
        /// A request head was too long.
        case headTooLong(address: String)
        /// A WebSocket sent far more messages than any page does (closed by the server, not the guard).
        case messageFlood(address: String)
    }

    private enum State {
        /// Not started (the channel not active yet).
        case idle
        /// Reading the first head: its bytes so far and the last four of them.
        case readingHead(bytes: Int, tail: UInt32)
        /// The head is complete: bytes pass.
        case passing
        /// Refused or timed out: nothing more is read.
        case closing
    }

    private let table: ConnectionTable
    private let limits: Limits
    private let report: @Sendable (Event) -> Void
    private var state = State.idle
    private var address: String?
    private var counted = false
    private var deadline: Scheduled<Void>?

    init(table: ConnectionTable, limits: Limits, report: @escaping @Sendable (Event) -> Void) {
        self.table = table
        self.limits = limits
        self.report = report
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        if case .closing = state { return }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
    }

    private func start(context: ChannelHandlerContext) {
        guard case .idle = state else { return }
        let address = Self.key(context.channel.remoteAddress)
        self.address = address
        switch table.open(from: address, at: Instant(nanoseconds: MonotonicClock.nanoseconds())) {
        case .refuseOpen:
            state = .closing
            report(.refused(address: address))
            context.close(promise: nil)
        case .refuseRate:
            state = .closing
            report(.tooFast(address: address))
            context.close(promise: nil)
        case .accept:
            counted = true
            state = .readingHead(bytes: 0, tail: 0)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            deadline = context.eventLoop.assumeIsolated().scheduleTask(in: limits.headTimeout) { [self] in
                guard case .readingHead = state else { return }
                report(.headTimedOut(address: address))
                refuse(context: loopBound.value, status: "408 Request Timeout")
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch state {
        case .passing:
            context.fireChannelRead(data)
        case .closing, .idle:
            return
        case .readingHead(var bytes, var tail):
            let buffer = unwrapInboundIn(data)
            var complete = false
            for byte in buffer.readableBytesView {
                bytes += 1
                tail = (tail << 8) | UInt32(byte)
                // The end of a head: CRLF CRLF, or the bare LF LF an HTTP parser also accepts.
                if tail == 0x0D0A_0D0A || tail & 0xFFFF == 0x0A0A {
                    complete = true
                    break
                }
                if bytes > limits.headLimit { break }
            }
            if complete {
                state = .passing
                deadline?.cancel()
                deadline = nil
                context.fireChannelRead(data)
            } else if bytes > limits.headLimit {
                report(.headTooLong(address: address ?? "?"))
                refuse(context: context, status: "431 Request Header Fields Too Large")
            } else {
                state = .readingHead(bytes: bytes, tail: tail)
                context.fireChannelRead(data)
            }
        }
    }

    /// Answers `status` in plain HTTP/1.1 (the HTTP layer above has not answered anything yet) and closes.
    private func refuse(context: ChannelHandlerContext, status: String) {
        state = .closing
        deadline?.cancel()
        deadline = nil
        var answer = "HTTP/1.1 \(status)\r\nConnection: close\r\nContent-Length: 0\r\n"
        for field in DashboardServer.securityHeaders() { answer += "\(field.name): \(field.value)\r\n" }
        answer += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: answer)), promise: nil)
        context.close(promise: nil)
    }

    private func finish() {
        deadline?.cancel()
        deadline = nil
        if counted, let address {
            counted = false
            table.close(from: address)
        }
    }

    /// The address a connection is counted under: its IP (an IPv4 address mapped into IPv6 as the IPv4 one).
    static func key(_ address: SocketAddress?) -> String {
        guard let ip = address?.ipAddress else { return "unknown" }
        return ip.hasPrefix("::ffff:") && ip.contains(".") ? String(ip.dropFirst(7)) : ip
    }
}

/// A server child channel with a `ConnectionGuard` at the front of its pipeline, then `base`'s own handlers.
struct GuardedChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value

    let base: Base
    let table: ConnectionTable
    let limits: ConnectionGuard.Limits
    let report: @Sendable (ConnectionGuard.Event) -> Void

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(ConnectionGuard(table: table, limits: limits, report: report))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
