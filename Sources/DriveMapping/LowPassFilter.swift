import DriveCore

/// An exponential low-pass filter whose smoothing depends on time, not on the sample rate.
///
/// Each sample moves the output by `alpha = dt/(tau + dt)` of the way to the sample, where `dt` is the
/// time since the previous sample and `tau` the time constant. The first sample (and every sample when
/// `tau` is 0) passes through unchanged. Non-finite samples are ignored; a sample at the same or an
/// earlier instant as the previous one does not move the output.
public struct LowPassFilter: Hashable, Sendable {
    /// The time constant `tau`; zero (or negative) means no filtering.
    public var timeConstant: Duration {
        didSet { timeConstantNanoseconds = timeConstant.nanoseconds }
    }
    /// `timeConstant` in nanoseconds, worked out when set (`Duration` arithmetic is 128-bit; this runs per sample).
    private var timeConstantNanoseconds: Int64
    /// The current output; nil before the first sample.
    public private(set) var value: Double?
    /// When the previous sample arrived.
    public private(set) var lastSampleTime: Instant?

    /// Creates a filter with time constant `timeConstant`.
    public init(timeConstant: Duration = .zero) {
        self.timeConstant = timeConstant
        timeConstantNanoseconds = timeConstant.nanoseconds
    }

    /// Feeds one sample taken at `time` and returns the new output.
    @discardableResult
    public mutating func update(_ sample: Double, at time: Instant) -> Double? {
        guard sample.isFinite else { return value }
        guard let previous = value, let lastTime = lastSampleTime, timeConstantNanoseconds > 0 else {
            value = sample
            lastSampleTime = time
            return sample
        }
        let dt = Double(max(time.nanoseconds &- lastTime.nanoseconds, 0))
        let tau = Double(timeConstantNanoseconds)
        let alpha = dt / (tau + dt)
        let next = previous + alpha * (sample - previous)
        value = next
        if time > lastTime { lastSampleTime = time }
        return next
    }

    /// Forgets the history: the next sample passes through unchanged.
    public mutating func reset() {
        value = nil
        lastSampleTime = nil
    }
}
