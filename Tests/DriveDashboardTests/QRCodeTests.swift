import XCTest

@testable import DriveDashboard

/// The QR encoder (libqrencode through CQRencode) and its two renderings.
final class QRCodeTests: XCTestCase {
    static let url = "http://192.168.1.10:8080/join?code=AAAAAAAAAAAAAAAA"

    /// `qrencode -t ASCII -l M -8 -m 0 "http://192.168.1.10:8080/join?code=AAAAAAAAAAAAAAAA"` (qrencode 4.1.1,
    /// Debian 12's): `##` per dark module, no quiet zone.
    static let expected = #"""
##############  ##    ##  ##  ##        ##  ######  ##############
##          ##    ####    ####      ######      ##  ##          ##
##  ######  ##          ##  ##    ####    ##    ##  ##  ######  ##
##  ######  ##  ##    ##        ####  ##  ##  ##    ##  ######  ##
##  ######  ##  ####  ####      ##    ##  ##        ##  ######  ##
##          ##  ####          ##    ##  ##          ##          ##
##############  ##  ##  ##  ##  ##  ##  ##  ##  ##  ##############
                ########    ##    ##  ##########                  
##      ##  ########    ##    ##  ####    ##      ##########    ##
        ####  ############  ########    ##    ####        ######  
  ######    ####  ####  ########    ##    ########        ##  ##  
    ##  ####    ##  ########  ####    ##  ##  ##  ##              
  ####  ##  ##  ##        ##  ####      ##  ##  ##  ##    ##    ##
      ####    ############  ##    ##########      ######  ####    
    ##  ##############  ####  ##  ##    ##    ####      ##    ##  
  ####  ####  ######      ##########      ######  ##  ######      
##########  ######  ##    ####    ######  ##      ####  ####  ##  
    ##    ##    ##  ##  ####  ####      ##  ######        ######  
  ####    ####      ##  ##    ##  ##      ######          ##  ##  
####    ####  ######      ##      ####    ##    ####          ####
  ######    ##          ##    ##    ######  ######  ##    ##      
##    ##        ####    ##      ##    ##          ######  ##  ##  
    ##      ##  ##      ####    ####    ##########  ##  ##    ##  
      ####    ######    ######    ##      ##  ##  ##  ####    ####
####      ####  ######    ######  ######  ##    ##########  ######
                ##  ####  ############  ##      ##      ##  ####  
##############  ##  ##    ##  ####  ##  ######  ##  ##  ####  ##  
##          ##      ##          ##        ##  ####      ####  ####
##  ######  ##  ##  ##        ####    ####  ##  ############  ####
##  ######  ##        ##    ##    ######  ##      ####  ##  ##    
##  ######  ##    ##  ######  ##    ##  ##    ##  ########        
##          ##    ##        ##########    ######      ##          
##############  ######            ##  ##  ##  ####  ##  ##  ##  ##
"""#

    func testMatrixMatchesTheQrencodeCommand() throws {
        let code = try QRCode(encoding: Self.url)
        let rows = Self.expected.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.isEmpty }
        XCTAssertEqual(code.size, rows.count)
        var drawn: [String] = []
        for row in 0..<code.size {
            drawn.append((0..<code.size).map { code.isDark(row: row, column: $0) ? "##" : "  " }.joined())
        }
        // qrencode's ASCII output has no trailing spaces trimmed: compare row by row.
        XCTAssertEqual(drawn, rows.map(String.init))
    }

    func testTerminalLinesAreTwoModuleRowsALineWithAQuietZone() throws {
        let code = try QRCode(encoding: Self.url)
        let lines = code.terminalLines
        let side = code.size + 2 * QRCode.quietZone
        XCTAssertEqual(lines.count, (side + 1) / 2)
        XCTAssertTrue(lines.allSatisfy { $0.count == side })
        // The quiet zone is light, and light modules are the glyphs' ink: the first two lines are full blocks.
        XCTAssertEqual(lines[0], String(repeating: "█", count: side))
        XCTAssertEqual(lines[1], String(repeating: "█", count: side))
        XCTAssertTrue(lines.joined().allSatisfy { "█▀▄ ".contains($0) })
        // Decoding the half blocks back gives the matrix.
        var decoded: [Bool] = []
        for row in 0..<code.size {
            let r = row + QRCode.quietZone
            let line = Array(lines[r / 2])
            for column in 0..<code.size {
                let glyph = line[column + QRCode.quietZone]
                let light = r % 2 == 0 ? (glyph == "█" || glyph == "▀") : (glyph == "█" || glyph == "▄")
                decoded.append(!light)
            }
        }
        XCTAssertEqual(decoded, code.modules)
    }

    func testSVGIsOnePathOfDarkModulesInsideTheQuietZone() throws {
        let code = try QRCode(encoding: Self.url)
        let svg = code.svg(pixels: 200)
        let side = code.size + 2 * QRCode.quietZone
        XCTAssertTrue(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\""), svg)
        XCTAssertTrue(svg.contains("shape-rendering=\"crispEdges\""))
        XCTAssertEqual(svg.split(separator: "<path", omittingEmptySubsequences: false).count, 2, "one path")
        // The top-left finder pattern's first row: 7 dark modules from (4, 4).
        XCTAssertTrue(svg.contains("d=\"M4 4h7v1h-7z"), svg)
    }

    func testTooLongATextIsATypedError() {
        XCTAssertThrowsError(try QRCode(encoding: String(repeating: "x", count: 4000))) { error in
            XCTAssertTrue("\(error)".contains("too long"), "\(error)")
        }
    }
}
