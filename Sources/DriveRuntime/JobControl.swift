import Glibc

/// What a run asks of the process and its terminal for job control (Ctrl-Z, `fg`, `bg`): the real
/// process, or in tests a stand-in that records the stop and says who has the terminal.
public protocol JobControl: AnyObject {
    /// Stops the process with `signal`'s default action and returns once it is continued (SIGCONT).
    func stopProcess(with signal: Int32)
    /// True when this process's group is the foreground process group of the terminal on `fd`.
    func isForeground(terminal fd: Int32) -> Bool
}

/// The real process: `raise(3)` for the stop, `tcgetpgrp(3)` for the foreground.
public final class ProcessJobControl: JobControl {
    /// The process this runs in.
    public init() {}

    /// Stops this process with `signal`'s default action, as vim and readline do: the signal is
    /// raised while blocked, then unblocked, so the process stops inside `pthread_sigmask` and goes
    /// on from there after SIGCONT. In an orphaned process group the kernel discards the stop and
    /// this returns at once.
    public func stopProcess(with signal: Int32) {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, signal)
        _ = Glibc.signal(signal, SIG_DFL)
        _ = raise(signal)
        _ = pthread_sigmask(SIG_UNBLOCK, &set, nil)
        // Continued (SIGCONT): back to the signalfd.
        _ = pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    public func isForeground(terminal fd: Int32) -> Bool {
        tcgetpgrp(fd) == getpgrp()
    }
}
