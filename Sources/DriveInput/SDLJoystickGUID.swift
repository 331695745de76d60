/// The 16-byte joystick GUID SDL gives an evdev device on Linux, the key of a GameControllerDB line.
///
/// Layout (SDL's `SDL_CreateJoystickGUID`, as `linux/SDL_sysjoystick.c` calls it: no vendor name, no
/// driver signature), each field a little-endian 16-bit word: bus, CRC-16 of the device name, vendor, 0,
/// product, 0, version, 0. Written as 32 lower-case hex digits, byte by byte
/// (`030000005e0400008e02000010010000` for an Xbox 360 pad with its CRC cleared).
public struct SDLJoystickGUID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes, in SDL's order.
    public private(set) var bytes: [UInt8]

    /// The GUID SDL computes for an evdev device from `EVIOCGID` and `EVIOCGNAME`.
    public init(bustype: UInt16, vendor: UInt16, product: UInt16, version: UInt16, name: String) {
        // SDL's Linux driver only special-cases two devices' versions (`FixupDeviceInfoForMapping`):
        // the Atari VCS controllers (3250:1001/1002) get version 0; the first Xbox Elite 2 firmware's
        // duplicate inputs are told apart by a key bit we leave to the DB's version-less fallback.
        let fixedVersion = vendor == 0x3250 && (product == 0x1001 || product == 0x1002) ? 0 : version
        bytes = [UInt8](repeating: 0, count: 16)
        setWord(0, bustype)
        setWord(1, Self.crc16(Array(name.utf8)))
        if vendor != 0 {
            setWord(2, vendor)
            setWord(4, product)
            setWord(6, fixedVersion)
        } else {
            // Without a vendor, SDL stores the name's first 11 bytes (and a NUL) after bus and CRC.
            for (index, byte) in name.utf8.prefix(11).enumerated() { bytes[4 + index] = byte }
        }
    }

    /// Parses 32 hex digits (either case); nil for anything else.
    public init?(hex text: some StringProtocol) {
        let digits = Array(text.utf8)
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for index in stride(from: 0, to: 32, by: 2) {
            guard let high = Self.hexValue(digits[index]), let low = Self.hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// The bus (`BUS_USB` = 3, `BUS_BLUETOOTH` = 5, …).
    public var bustype: UInt16 { word(0) }
    /// True for SDL's standard form (`SDL_GetJoystickGUIDInfo`): a bus below 0x20 (or 0xff, virtual) and
    /// zero words after vendor and product; otherwise the GUID holds a name and has no ids.
    private var isStandardForm: Bool { (bustype < 0x20 || bustype == 0xff) && word(3) == 0 && word(5) == 0 }
    /// The CRC-16 of the device name (0 in most DB lines: SDL keeps it in a `crc:` field instead).
    public var crc: UInt16 { bustype < 0x20 || bustype == 0xff ? word(1) : 0 }
    /// The vendor id (0 when the GUID holds a name instead).
    public var vendor: UInt16 { isStandardForm ? word(2) : 0 }
    /// The product id (0 when the GUID holds a name instead).
    public var product: UInt16 { isStandardForm ? word(4) : 0 }
    /// The version (0 when the GUID holds a name instead).
    public var version: UInt16 { isStandardForm ? word(6) : 0 }

    /// SDL matches without the version too, but only for GUIDs with a vendor and a product
    /// (`SDL_JoystickGUIDUsesVersion`).
    public var usesVersion: Bool { vendor != 0 && product != 0 }

    /// This GUID with its CRC word set to `crc` (`SDL_SetJoystickGUIDCRC`).
    public func with(crc: UInt16) -> SDLJoystickGUID {
        var copy = self
        copy.setWord(1, crc)
        return copy
    }

    /// This GUID with its version word set to `version` (`SDL_SetJoystickGUIDVersion`).
    public func with(version: UInt16) -> SDLJoystickGUID {
        var copy = self
        copy.setWord(6, version)
        return copy
    }

    /// 32 lower-case hex digits, as SDL writes them.
    public var description: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// SDL's CRC-16 (`SDL_crc16`: reflected polynomial 0xA001, initial value 0, i.e. CRC-16/ARC).
    public static func crc16(_ data: [UInt8], initial: UInt16 = 0) -> UInt16 {
        var crc = initial
        for byte in data {
            var value = UInt8(truncatingIfNeeded: crc) ^ byte
            var table: UInt16 = 0
            for _ in 0..<8 {
                table = ((table ^ UInt16(value)) & 1 != 0 ? 0xA001 : 0) ^ table >> 1
                value >>= 1
            }
            crc = table ^ crc >> 8
        }
        return crc
    }

    private func word(_ index: Int) -> UInt16 { UInt16(bytes[index * 2]) | UInt16(bytes[index * 2 + 1]) << 8 }

    private mutating func setWord(_ index: Int, _ value: UInt16) {
        bytes[index * 2] = UInt8(truncatingIfNeeded: value)
        bytes[index * 2 + 1] = UInt8(truncatingIfNeeded: value >> 8)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
