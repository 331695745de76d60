/// Decides a device's class from its udev properties and capabilities. Pure.
public enum DeviceClassifier {
    /// The class of an `input` device from its udev `properties` (`ID_INPUT_*`), the `EV_KEY` codes it
    /// supports and its `INPUT_PROP_*` bits. A balance board (by the name `hid-wiimote` gives it) beats
    /// everything (udev calls it a joystick: it has `BTN_A`), accelerometer beats gamepad (a DualSense's
    /// motion node has no buttons), gamepad beats keyboard (many pads also set `ID_INPUT_KEY`). A racing wheel
    /// that `RacingWheels` knows by `vendor` and `product` is a gamepad whatever udev says.
    public static func classifyInput(
        properties: [String: String], keys: Set<UInt16> = [], inputProperties: Set<UInt16> = [], name: String? = nil,
        vendor: UInt16? = nil, product: UInt16? = nil
    ) -> DeviceClass {
        if let name, isBalanceBoard(name: name) { return .balanceBoard }
        if properties["ID_INPUT_ACCELEROMETER"] == "1" || inputProperties.contains(EvdevCode.propAccelerometer) {
            return .accelerometer
        }
        if properties["ID_INPUT_JOYSTICK"] == "1" || keys.contains(EvdevCode.btnSouth)
            || RacingWheels.model(vendor: vendor, product: product) != nil
        {
            return .gamepad
        }
        if properties["ID_INPUT_KEY"] == "1" || properties["ID_INPUT_KEYBOARD"] == "1" {
            return .keyboard
        }
        return .other
    }

    /// The name `hid-wiimote` gives a balance board's input device (WIIMOTE_NAME " Balance Board").
    public static let balanceBoardName = "Nintendo Wii Remote Balance Board"

    /// True for a balance board's input device name.
    public static func isBalanceBoard(name: String) -> Bool { name == balanceBoardName }

    /// The class of an `iio` device from the names of the files in its sysfs directory: an accelerometer
    /// when it has `in_accel_x_raw`, `in_accel_y_raw` and `in_accel_z_raw`.
    public static func classifyIIO(attributeNames: Set<String>) -> DeviceClass {
        let needed: Set<String> = ["in_accel_x_raw", "in_accel_y_raw", "in_accel_z_raw"]
        return needed.isSubset(of: attributeNames) ? .iioAccelerometer : .other
    }

    /// The bit numbers set in a sysfs capability bitmask (`capabilities/key`, `properties`): hex words of
    /// `wordBits` bits separated by spaces, most significant word first (e.g. `7fff000000000000 0 0`).
    /// Unparseable words count as 0.
    public static func bits(ofSysfsBitmask text: String, wordBits: Int = Int.bitWidth) -> Set<UInt16> {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\t" })
        var result: Set<UInt16> = []
        for (index, word) in words.reversed().enumerated() {
            guard let value = UInt64(word, radix: 16) else { continue }
            for bit in 0..<min(wordBits, 64) where value & (UInt64(1) << UInt64(bit)) != 0 {
                let number = index * wordBits + bit
                if number <= Int(UInt16.max) { result.insert(UInt16(number)) }
            }
        }
        return result
    }
}
