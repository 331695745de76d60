/// The racing wheels carbridge recognises by USB vendor and product, so `[devices] gamepad = "auto"` takes
/// one even where udev has not tagged it `ID_INPUT_JOYSTICK` (a wheel reports `BTN_TRIGGER`…, not
/// `BTN_SOUTH`), and `carbridge devices` can say what it is.
///
/// Source: SDL's `SDL_IsJoystickProductWheel` table (src/joystick/SDL_joystick.c, SDL 2.30), whose ids
/// are those of the kernel's drivers/hid/hid-ids.h (`USB_DEVICE_ID_LOGITECH_G29_WHEEL` 0xc24f, …) and of
/// hid-thrustmaster.c. A wheel in a compatibility mode (a G29 emulating a Driving Force) has the emulated
/// wheel's id, which the table holds too.
public enum RacingWheels {
    /// One recognised wheel.
    public struct Model: Hashable, Sendable {
        /// USB vendor id.
        public let vendor: UInt16
        /// USB product id.
        public let product: UInt16
        /// What SDL calls it.
        public let name: String
    }

    /// Every recognised wheel, in SDL's order.
    public static let models: [Model] = [
        Model(vendor: 0x0079, product: 0x1864, name: "DragonRise wired wheel (PXN V900, active mode)"),
        Model(vendor: 0x046D, product: 0xC294, name: "Logitech Driving Force / generic wheel"),
        Model(vendor: 0x046D, product: 0xC295, name: "Logitech MOMO Force"),
        Model(vendor: 0x046D, product: 0xC298, name: "Logitech Driving Force Pro"),
        Model(vendor: 0x046D, product: 0xC299, name: "Logitech G25"),
        Model(vendor: 0x046D, product: 0xC29A, name: "Logitech Driving Force GT"),
        Model(vendor: 0x046D, product: 0xC29B, name: "Logitech G27"),
        Model(vendor: 0x046D, product: 0xC24F, name: "Logitech G29 (PS3)"),
        Model(vendor: 0x046D, product: 0xC260, name: "Logitech G29 (PS4)"),
        Model(vendor: 0x046D, product: 0xC261, name: "Logitech G920 (initial mode)"),
        Model(vendor: 0x046D, product: 0xC262, name: "Logitech G920 (active mode)"),
        Model(vendor: 0x046D, product: 0xC268, name: "Logitech PRO Racing Wheel (PC mode)"),
        Model(vendor: 0x046D, product: 0xC269, name: "Logitech PRO Racing Wheel (PS4/PS5 mode)"),
        Model(vendor: 0x046D, product: 0xC26D, name: "Logitech G923 (Xbox)"),
        Model(vendor: 0x046D, product: 0xC26E, name: "Logitech G923"),
        Model(vendor: 0x046D, product: 0xCA03, name: "Logitech MOMO Racing"),
        Model(vendor: 0x044F, product: 0xB65D, name: "Thrustmaster wheel (FFB, initial mode)"),
        Model(vendor: 0x044F, product: 0xB66D, name: "Thrustmaster T300RS (PS4 mode)"),
        Model(vendor: 0x044F, product: 0xB677, name: "Thrustmaster T150"),
        Model(vendor: 0x044F, product: 0xB696, name: "Thrustmaster T248"),
        Model(vendor: 0x044F, product: 0xB66E, name: "Thrustmaster T300RS (normal mode)"),
        Model(vendor: 0x044F, product: 0xB66F, name: "Thrustmaster T300RS (advanced mode)"),
        Model(vendor: 0x044F, product: 0xB65E, name: "Thrustmaster T500RS"),
        Model(vendor: 0x044F, product: 0xB664, name: "Thrustmaster TX (initial mode)"),
        Model(vendor: 0x044F, product: 0xB669, name: "Thrustmaster TX (active mode)"),
        Model(vendor: 0x11FF, product: 0x0511, name: "DragonRise wired wheel (PXN V900, initial mode)"),
    ]

    /// The recognised wheel with this vendor and product; nil for anything else.
    public static func model(vendor: UInt16?, product: UInt16?) -> Model? {
        guard let vendor, let product else { return nil }
        return models.first { $0.vendor == vendor && $0.product == product }
    }
}
