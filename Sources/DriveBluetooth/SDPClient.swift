import CBluetooth
import CLinux
import DriveCore
import DriveLink
import DriveSystem
import Glibc

/// Asks a device's SDP server (L2CAP PSM 1) for its Serial Port records, on the event loop: a
/// non-blocking L2CAP connect, one `ServiceSearchAttributeRequest` (repeated with the continuation
/// state while the server splits the answer), the records parsed by `SDP`. Works unprivileged and next
/// to bluetoothd; the device must be in range (and, for an HC-05, SDP needs no pairing).
package final class SDPClient {
    private let loop: EventLoop
    private var fd: Int32 = -1
    private var timer: EventLoop.TimerID?
    private var done: ((Result<[SDPRecord], SDPParseError>) -> Void)?
    private var transaction: UInt16 = 1
    private var collected: [UInt8] = []
    private let uuid16: UInt16

    private init(loop: EventLoop, uuid16: UInt16) {
        self.loop = loop
        self.uuid16 = uuid16
    }

    /// Starts the query of `address`'s records of class `uuid16` (through the adapter with address
    /// `localAddress`, nil = any); `done` runs once on the loop. Keep the returned client until then.
    package static func query(
        loop: EventLoop, address: String, localAddress: String?, uuid16: UInt16 = SDP.serialPort,
        timeout: Duration = .seconds(10), done: @escaping (Result<[SDPRecord], SDPParseError>) -> Void
    ) -> SDPClient {
        let client = SDPClient(loop: loop, uuid16: uuid16)
        client.done = done
        client.start(address: address, localAddress: localAddress, timeout: timeout)
        return client
    }

    /// Stops without calling `done`.
    package func cancel() {
        done = nil
        finish(.failure(SDPParseError("cancelled")))
    }

    /// `struct sockaddr_l2` (14 bytes): family, psm (LE), bdaddr, cid, bdaddr type.
    private static func l2Address(_ text: String?, psm: UInt16) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: 14)
        bytes[0] = UInt8(AF_BLUETOOTH & 0xFF)
        bytes[1] = UInt8((AF_BLUETOOTH >> 8) & 0xFF)
        bytes[2] = UInt8(psm & 0xFF)
        bytes[3] = UInt8(psm >> 8)
        if let text {
            var address = bdaddr_t()
            guard LinkURL.isBluetoothAddress(text), str2ba(text, &address) == 0 else { return nil }
            withUnsafeBytes(of: &address) { raw in for i in 0..<6 { bytes[4 + i] = raw[i] } }
        }
        return bytes
    }

    private func start(address: String, localAddress: String?, timeout: Duration) {
        timer = loop.schedule(after: timeout) { [weak self] in
            self?.timer = nil
            self?.finish(.failure(SDPParseError("no SDP answer within \(timeout.components.seconds) s (is it switched on and within range?)")))
        }
        guard let remote = Self.l2Address(address, psm: 1), let local = Self.l2Address(localAddress, psm: 0) else {
            fail("\"\(address)\" is not a Bluetooth address")
            return
        }
        let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        fd = socket(AF_BLUETOOTH, type, 0 /* BTPROTO_L2CAP */)
        if fd < 0 { return fail("cannot open an L2CAP socket (\(SocketSupport.reason(errno)))") }
        if localAddress != nil {
            let rc = local.withUnsafeBytes { raw in
                Glibc.bind(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
            }
            if rc != 0 { return fail("cannot bind to the adapter \(localAddress!) (\(SocketSupport.reason(errno)))") }
        }
        let rc = remote.withUnsafeBytes { raw in
            Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if rc == 0 { return connected() }
        let code = errno
        guard code == EINPROGRESS || code == EAGAIN || code == EINTR else {
            return fail("SDP connection to \(address) failed (\(SocketSupport.reason(code)))")
        }
        do {
            try loop.watch(fd, for: .writable) { [weak self] _ in
                guard let self else { return }
                let pending = SocketSupport.pendingError(self.fd)
                if pending != 0 { return self.fail("SDP connection to \(address) failed (\(SocketSupport.reason(pending)))") }
                self.connected()
            }
        } catch {
            fail("cannot watch the SDP socket: \(error)")
        }
    }

    private func connected() {
        do {
            try loop.watch(fd, for: .readable) { [weak self] _ in self?.readable() }
        } catch {
            return fail("cannot watch the SDP socket: \(error)")
        }
        send(continuation: [])
    }

    private func send(continuation: [UInt8]) {
        let pdu = SDP.searchAttributeRequest(transaction: transaction, uuid16: uuid16, continuation: continuation)
        let sent = pdu.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent != pdu.count { fail("sending the SDP request failed (\(SocketSupport.reason(errno)))") }
    }

    private func readable() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return }
            return fail("reading the SDP answer failed (\(SocketSupport.reason(errno)))")
        }
        if count == 0 { return fail("the device closed the SDP connection") }
        do {
            let (part, continuation) = try SDP.parseResponse(Array(buffer[0..<count]), transaction: transaction)
            collected += part
            if !continuation.isEmpty {
                transaction &+= 1
                send(continuation: continuation)
                return
            }
            finish(.success(try SDP.records(fromAttributeLists: collected)))
        } catch {
            finish(.failure(error))
        }
    }

    private func fail(_ text: String) { finish(.failure(SDPParseError(text))) }

    private func finish(_ result: Result<[SDPRecord], SDPParseError>) {
        if let timer { loop.cancel(timer) }
        timer = nil
        if fd >= 0 {
            loop.unwatch(fd)
            Syscall.close(fd)
            fd = -1
        }
        let handler = done
        done = nil
        handler?(result)
    }
}
