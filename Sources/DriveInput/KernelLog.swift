import CLinux
import DriveSystem
import Glibc

/// The kernel's log (`/dev/kmsg`), read once for the lines that name one device: what a driver said when it
/// refused it.
public enum KernelLog {
    /// Reads `messages(containing:)` on a thread of its own (the whole log is read: never on the loop, whose
    /// frames and sensor watchdog must not wait for it) and hands the result to `completion` on the loop.
    public static func read(containing text: String, loop: EventLoop, completion: @escaping ([String]?) -> Void) {
        let deliver = LoopBound(completion)
        let submitter = loop.submitter
        do {
            try BackgroundThread.start {
                let found = Found(messages(containing: text))
                submitter.submit { deliver.value(found.messages) }
            }
        } catch {
            completion(nil)
        }
    }

    /// Carries the messages from the reading thread to the loop's.
    private final class Found: @unchecked Sendable {
        let messages: [String]?
        init(_ messages: [String]?) { self.messages = messages }
    }

    /// The last `limit` messages that contain `text`, oldest first; nil when the log cannot be read (reading it
    /// takes root or `CAP_SYSLOG` where `kernel.dmesg_restrict` is set, Debian's default).
    public static func messages(containing text: String, limit: Int = 6) -> [String]? {
        let fd = cb_open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0)
        guard fd >= 0 else { return nil }
        defer { Syscall.close(fd) }
        var found: [String] = []
        var record = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = record.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EPIPE { continue }  // EPIPE: records overwritten meanwhile
                break  // EAGAIN: the end of the log
            }
            if count == 0 { break }
            // "PRIORITY,SEQUENCE,MICROSECONDS,FLAGS;MESSAGE\n" then continuation lines (" KEY=VALUE").
            let line = String(decoding: record[0..<count], as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            guard let semicolon = line.firstIndex(of: ";") else { continue }
            let message = String(line[line.index(after: semicolon)...])
            if message.contains(text) {
                found.append(message)
                if found.count > limit { found.removeFirst() }
            }
        }
        return found
    }
}
