import DriveConfig
import Foundation
import X509
import XCTest

@testable import DriveDashboard

/// The self-signed certificate: made and written once, read back with the same fingerprint, made again
/// (with the reason) only when the stored one cannot be used; the key file is the owner's only.
final class DashboardCertificateTests: XCTestCase {
    private let hosts = DashboardCertificate.subjectNames(for: ListenAddress(host: "127.0.0.1", port: 8443))

    private func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("carbridge-cert-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        // Not made here: the certificate's code makes the state directory itself.
        return url.path + "/state/carbridge"
    }

    func testMadeWrittenAndReusedWithTheSameFingerprint() throws {
        let directory = try temporaryDirectory()
        let first = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        XCTAssertNotNil(first.regenerated, "there was nothing to reuse")
        XCTAssertTrue(first.regenerated?.contains("missing") ?? false, first.regenerated ?? "")
        XCTAssertEqual(first.fingerprint.count, 32 * 3 - 1)
        XCTAssertNotNil(first.fingerprint.wholeMatch(of: /([0-9A-F]{2}:){31}[0-9A-F]{2}/))
        let certText = try String(contentsOfFile: directory + "/dashboard-cert.pem", encoding: .utf8)
        let certificate = try Certificate(pemEncoded: certText)
        XCTAssertEqual(DashboardCertificate.fingerprint(of: try first.chain[0].toDERBytes()), first.fingerprint)
        let names = try XCTUnwrap(try certificate.extensions.subjectAlternativeNames)
        XCTAssertTrue(names.contains(DashboardCertificate.SubjectName.ip([127, 0, 0, 1]).generalName))
        XCTAssertTrue(names.contains(.dnsName("localhost")))

        let second = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        XCTAssertNil(second.regenerated, "a valid stored certificate is reused")
        XCTAssertEqual(second.fingerprint, first.fingerprint)
    }

    func testKeyFileIsTheOwnersOnlyAndNoTemporaryFileIsLeft() throws {
        let directory = try temporaryDirectory()
        _ = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/dashboard-key.pem")
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory).sorted(), ["dashboard-cert.pem", "dashboard-key.pem"])
    }

    func testACorruptCertificateIsMadeAgainWithTheReason() throws {
        let directory = try temporaryDirectory()
        let first = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        try "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".write(
            toFile: directory + "/dashboard-cert.pem", atomically: true, encoding: .utf8)
        let second = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        XCTAssertTrue(second.regenerated?.contains("is not a PEM certificate") ?? false, second.regenerated ?? "reused")
        XCTAssertNotEqual(second.fingerprint, first.fingerprint)
        let third = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        XCTAssertNil(third.regenerated)
        XCTAssertEqual(third.fingerprint, second.fingerprint)
    }

    func testAnotherKeyOrAnotherHostIsMadeAgain() throws {
        let directory = try temporaryDirectory()
        let first = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        let other = try DashboardCertificate.selfSigned(directory: directory + "-other", hosts: hosts)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: directory + "-other") }
        try FileManager.default.removeItem(atPath: directory + "/dashboard-key.pem")
        try FileManager.default.copyItem(atPath: directory + "-other/dashboard-key.pem", toPath: directory + "/dashboard-key.pem")
        let remade = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        XCTAssertTrue(remade.regenerated?.contains("is not the key of") ?? false, remade.regenerated ?? "reused")
        XCTAssertNotEqual(remade.fingerprint, first.fingerprint)
        XCTAssertNotEqual(remade.fingerprint, other.fingerprint)
        let lan = DashboardCertificate.subjectNames(for: ListenAddress(host: "192.0.2.7", port: 8443))
        let moved = try DashboardCertificate.selfSigned(directory: directory, hosts: lan)
        XCTAssertTrue(moved.regenerated?.contains("does not name 192.0.2.7") ?? false, moved.regenerated ?? "reused")
    }

    func testSubjectNames() {
        XCTAssertEqual(
            DashboardCertificate.subjectNames(for: ListenAddress(host: "192.0.2.7", port: 1)),
            [.ip([192, 0, 2, 7]), .dns("localhost"), .ip([127, 0, 0, 1])])
        let wildcard = DashboardCertificate.subjectNames(for: ListenAddress(host: "0.0.0.0", port: 1))
        XCTAssertFalse(wildcard.contains(.ip([0, 0, 0, 0])))
        for address in DashboardCertificate.localIPv4Addresses() {
            XCTAssertTrue(wildcard.contains(.ip(address)), "\(address)")
        }
    }

    func testOperatorFilesAreReadAndABadOneIsNamed() throws {
        let directory = try temporaryDirectory()
        let made = try DashboardCertificate.selfSigned(directory: directory, hosts: hosts)
        let files = try DashboardCertificate.load(
            .files(cert: directory + "/dashboard-cert.pem", key: directory + "/dashboard-key.pem"), directory: { "/nonexistent" }, hosts: [])
        XCTAssertEqual(files.fingerprint, made.fingerprint)
        XCTAssertThrowsError(try DashboardCertificate.load(
            .files(cert: directory + "/dashboard-key.pem", key: directory + "/dashboard-key.pem"), directory: { "/nonexistent" }, hosts: [])
        ) { error in
            XCTAssertTrue("\(error)".contains("[dashboard] cert \(directory)/dashboard-key.pem"), "\(error)")
        }
    }

    func testARelativeStateDirectoryIsMadeUnderTheWorkingDirectory() throws {
        let base = try temporaryDirectory()
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        let saved = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(base))
        defer { FileManager.default.changeCurrentDirectoryPath(saved) }
        _ = try DashboardCertificate.selfSigned(directory: "relative/state", hosts: hosts)
        XCTAssertTrue(FileManager.default.fileExists(atPath: base + "/relative/state/dashboard-key.pem"))
    }

    func testStateDirectory() throws {
        XCTAssertEqual(try StateFile.directory(environment: ["STATE_DIRECTORY": "/var/lib/carbridge:/var/lib/other", "HOME": "/h"]), "/var/lib/carbridge")
        XCTAssertEqual(try StateFile.directory(environment: ["XDG_STATE_HOME": "/x", "HOME": "/h"]), "/x/carbridge")
        XCTAssertEqual(try StateFile.directory(environment: ["HOME": "/h"]), "/h/.local/state/carbridge")
        XCTAssertThrowsError(try StateFile.directory(environment: [:]))
    }
}
