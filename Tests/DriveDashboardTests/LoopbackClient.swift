import Glibc
import XCTest

/// Plain HTTP/1.1 over a TCP socket to 127.0.0.1, for the tests that run a real dashboard server: the bytes
/// exactly as a client sends them (a slow head, a huge one, a connection that says nothing).
enum LoopbackClient {
    /// A socket connected to 127.0.0.1:`port` that gives up reading after 10 s.
    static func connect(port: Int) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(fd, 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        XCTAssertEqual(connected, 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    /// Writes `text` (no SIGPIPE if the server has closed).
    static func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything the server sends until it closes (or the receive timeout passes).
    static func readAll(_ fd: Int32) -> String {
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            response += buffer[0..<count]
        }
        return String(decoding: response, as: UTF8.self)
    }

    /// One request's whole answer, on a connection of its own.
    static func request(port: Int, _ text: String) -> String {
        let fd = connect(port: port)
        defer { close(fd) }
        send(fd, text)
        return readAll(fd)
    }

    /// `GET path` with `Connection: close`: the whole answer.
    static func get(_ path: String, port: Int) -> String {
        request(port: port, "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
    }

    /// The value of header `name` in an answer, if it has one.
    static func header(_ name: String, in response: String) -> String? {
        for line in response.components(separatedBy: "\r\n") where line.lowercased().hasPrefix(name.lowercased() + ":") {
            return String(line.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces)
        }
        return nil
    }
}
