/// The D-Bus names of bluetoothd's API (org.bluez, doc/*-api.txt in BlueZ) that the BLE link uses.
enum BlueZNames {
    /// The bus name.
    static let service = "org.bluez"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let properties = "org.freedesktop.DBus.Properties"
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let characteristic = "org.bluez.GattCharacteristic1"
}
