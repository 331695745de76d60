/// What a device is used for; decides which parts of its frames the mapper reads.
public enum DeviceRole: String, CaseIterable, Hashable, Sendable {
    /// Sticks (steering), a trigger (throttle), hats and buttons.
    case gamepad
    /// Tilt steering from the acceleration; any keys are still mapped.
    case accelerometer
    /// Keys only.
    case keyboard
    /// A balance board: its load cells give presence, steering and throttle (hands-free); its button is mapped.
    case board
}
