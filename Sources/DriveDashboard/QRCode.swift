import CQRencode
import Glibc

/// A QR code (error correction level M) as its matrix of modules, made by libqrencode; renders as text
/// for a terminal and as SVG for the page.
package struct QRCode: Sendable, Equatable {
    /// Why a text could not be encoded.
    package struct EncodeError: Error, CustomStringConvertible, Sendable {
        /// What libqrencode said (its errno), in words.
        package var description: String
    }

    /// Modules per side.
    package let size: Int
    /// The modules row by row, `true` = dark.
    package let modules: [Bool]

    /// The light border around the code, in modules (the standard asks for 4: scanners find the code by it).
    package static let quietZone = 4

    /// Encodes `text` in 8-bit mode at the smallest version that holds it.
    package init(encoding text: String) throws(EncodeError) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            let reason = errno == EINVAL ? "invalid input" : errno == ERANGE ? "too long for a QR code" : "out of memory"
            throw EncodeError(description: "cannot encode \(text.utf8.count) bytes as a QR code: \(reason)")
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        // Bit 0 of each byte is the module's colour (1 = dark); the other bits say what the module is part of.
        let data = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        size = width
        modules = data.map { $0 & 1 == 1 }
    }

    /// A code from its matrix (for tests).
    package init(size: Int, modules: [Bool]) {
        precondition(modules.count == size * size, "a QR matrix has size × size modules")
        self.size = size
        self.modules = modules
    }

    /// True when the module at `row`, `column` is dark; outside the code (the quiet zone) it is light.
    package func isDark(row: Int, column: Int) -> Bool {
        guard row >= 0, row < size, column >= 0, column < size else { return false }
        return modules[row * size + column]
    }

    /// The code for a terminal, quiet zone included: two module rows per line with the half blocks
    /// `▀ ▄ █` and a space. A glyph's ink is the *light* module: a terminal draws glyphs in its
    /// foreground (light on the usual dark background) and leaves the rest in its background, so the code
    /// comes out dark on light, as scanners expect. Whoever draws it should set a light foreground on a
    /// dark background around these lines, so it scans on a light-themed terminal too.
    package var terminalLines: [String] {
        let side = size + 2 * Self.quietZone
        var lines: [String] = []
        var row = -Self.quietZone
        while row < size + Self.quietZone {
            var line = ""
            line.reserveCapacity(side * 3)
            for column in -Self.quietZone..<(size + Self.quietZone) {
                let topLight = !isDark(row: row, column: column)
                // The row below the last one is light: the quiet zone goes on.
                let bottomLight = row + 1 >= size + Self.quietZone || !isDark(row: row + 1, column: column)
                switch (topLight, bottomLight) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            lines.append(line)
            row += 2
        }
        return lines
    }

    /// The code as an SVG image (one `<path>` of the dark modules on a white square that is the quiet
    /// zone), one unit per module, with crisp edges; `pixels` is its displayed width and height.
    package func svg(pixels: Int = 240) -> String {
        let side = size + 2 * Self.quietZone
        var path = ""
        for row in 0..<size {
            var column = 0
            while column < size {
                guard isDark(row: row, column: column) else {
                    column += 1
                    continue
                }
                // One rectangle per horizontal run of dark modules keeps the path short.
                var end = column
                while end < size && isDark(row: row, column: end) { end += 1 }
                path += "M\(column + Self.quietZone) \(row + Self.quietZone)h\(end - column)v1h-\(end - column)z"
                column = end
            }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" width=\"\(pixels)\" height=\"\(pixels)\" "
            + "shape-rendering=\"crispEdges\"><rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/>"
            + "<path fill=\"#000\" d=\"\(path)\"/></svg>"
    }
}
