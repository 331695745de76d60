// IIO sysfs values: IIOValue.parse (raw, scale, offset files) and MountMatrix.parse (in_accel_mount_matrix,
// udev ACCEL_MOUNT_MATRIX). Only finite numbers may come out.
import DriveInput
import DriveInputModel
import DriveMapping
import FuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIIOValue(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzBytes(data, size), as: UTF8.self)
    do {
        let value = try IIOValue.parse(text)
        fuzzCheck(value.isFinite, "\(text.debugDescription) gave \(value)")
        let trimmed = text.unicodeScalars.filter { !" \t\n\r".unicodeScalars.contains($0) }
        fuzzCheck(trimmed.allSatisfy { "0123456789+-.eE".unicodeScalars.contains($0) }, "accepted \(text.debugDescription)")
        fuzzCheck(Double(String(String.UnicodeScalarView(trimmed))) == value, "\(text.debugDescription) is not \(value)")
    } catch {
        _ = error.description
    }
    do {
        let matrix = try MountMatrix.parse(text)
        for row in matrix.rows {
            fuzzCheck(row.x.isFinite && row.y.isFinite && row.z.isFinite, "matrix \(text.debugDescription) gave \(matrix)")
            fuzzCheck(row.x != 0 || row.y != 0 || row.z != 0, "a zero row accepted: \(text.debugDescription)")
        }
        let again = try MountMatrix.parse(matrix.description)
        fuzzCheck(again == matrix, "\(matrix) does not round-trip through its text (\(again))")
    } catch {
        _ = error.description
    }
    return 0
}
