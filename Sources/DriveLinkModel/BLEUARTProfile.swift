/// A Bluetooth Low Energy "serial" (UART) profile: the GATT service a car module offers, the
/// characteristic frames are written to and the one its lines are notified on.
///
/// To the Arduino behind it such a module is a plain UART; to the host it is this triple. The known
/// modules are recognised from the services they advertise or resolve (`known`); any other is named in the
/// config (`[link] ble_service`, `ble_write`, `ble_notify`). UUIDs are kept in BlueZ's spelling: 128-bit,
/// lower-case, with dashes.
public struct BLEUARTProfile: Hashable, Sendable, CustomStringConvertible {
    /// What the profile is called in logs and `carbridge scan` (`HM-10`, `Nordic UART`).
    public var name: String
    /// The GATT service.
    public var service: String
    /// The characteristic frames are written to.
    public var write: String
    /// The characteristic the car's lines come from (the same as `write` on an HM-10).
    public var notify: String

    /// A profile from UUIDs in any accepted spelling (`FFE0`, `0000ffe0-…`); nil when one is not a UUID.
    public init?(name: String, service: String, write: String, notify: String) {
        guard let service = Self.normalizedUUID(service), let write = Self.normalizedUUID(write),
              let notify = Self.normalizedUUID(notify) else { return nil }
        self.name = name
        self.service = service
        self.write = write
        self.notify = notify
    }

    /// HM-10 and its CC2541/CC2540 kin (AT-09, MLT-BT05, HC-08, JDY-08/23): service FFE0, one characteristic
    /// FFE1 for both directions.
    public static let hm10 = BLEUARTProfile(name: "HM-10", service: "ffe0", write: "ffe1", notify: "ffe1")!
    /// Nordic UART Service (nRF5 SDK, Zephyr, ESP32 and micro:bit cars): RX 6E400002 (the car receives),
    /// TX 6E400003 (the car notifies).
    public static let nordic = BLEUARTProfile(
        name: "Nordic UART", service: "6e400001-b5a3-f393-e0a9-e50e24dcca9e",
        write: "6e400002-b5a3-f393-e0a9-e50e24dcca9e", notify: "6e400003-b5a3-f393-e0a9-e50e24dcca9e")!
    /// Microchip's Transparent UART (RN4870/RN4871, BM70/BM71, IS1870/1871).
    public static let microchip = BLEUARTProfile(
        name: "Microchip transparent UART", service: "49535343-fe7d-4ae5-8fa9-9fafd205e455",
        write: "49535343-8841-43f4-a8d4-ecbe34729bb3", notify: "49535343-1e4d-4bd9-ba61-23c647249616")!

    /// The profiles recognised without configuration, in the order they are tried.
    public static let known: [BLEUARTProfile] = [hm10, nordic, microchip]

    /// The first of `profiles` whose service is among `serviceUUIDs` (any spelling), or nil.
    public static func recognise(serviceUUIDs: [String], among profiles: [BLEUARTProfile] = known) -> BLEUARTProfile? {
        let offered = Set(serviceUUIDs.compactMap(normalizedUUID))
        return profiles.first { offered.contains($0.service) }
    }

    /// The Bluetooth base UUID's tail: a 16- or 32-bit UUID `XXXX` is `0000XXXX-0000-1000-8000-00805f9b34fb`.
    static let baseTail = "-0000-1000-8000-00805f9b34fb"

    /// A UUID in BlueZ's spelling (128-bit, lower-case, dashes) from `FFE0`, `0xFFE0`, `0000FFE0` or a full
    /// 128-bit UUID with or without dashes; nil when `text` is none of those.
    public static func normalizedUUID(_ text: String) -> String? {
        var hex = text.lowercased()
        if hex.hasPrefix("0x") { hex = String(hex.dropFirst(2)) }
        let isHex: (Character) -> Bool = { $0.isASCII && $0.isHexDigit }
        if hex.count == 4, hex.allSatisfy(isHex) { return "0000" + hex + baseTail }
        if hex.count == 8, hex.allSatisfy(isHex) { return hex + baseTail }
        let digits = hex.filter { $0 != "-" }
        guard digits.count == 32, digits.allSatisfy(isHex) else { return nil }
        if hex.contains("-") {
            // Dashes only in the standard places: 8-4-4-4-12.
            let groups = hex.split(separator: "-", omittingEmptySubsequences: false).map(\.count)
            guard groups == [8, 4, 4, 4, 12] else { return nil }
        }
        let d = Array(digits)
        return String(d[0..<8]) + "-" + String(d[8..<12]) + "-" + String(d[12..<16]) + "-" + String(d[16..<20])
            + "-" + String(d[20..<32])
    }

    /// The short form of a UUID on the base UUID (`ffe0`), else the UUID itself: for messages.
    public static func shortUUID(_ uuid: String) -> String {
        if uuid.hasPrefix("0000"), uuid.hasSuffix(baseTail), uuid.count == 36 {
            return String(uuid.dropFirst(4).prefix(4))
        }
        return uuid
    }

    /// `HM-10 (service ffe0, write ffe1, notify ffe1)`.
    public var description: String {
        "\(name) (service \(Self.shortUUID(service)), write \(Self.shortUUID(write)), notify \(Self.shortUUID(notify)))"
    }
}
