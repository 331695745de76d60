import Crypto
import DriveConfig
import FoundationEssentials

/// A page's `Content-Security-Policy`: its own inline `<script>` and `<style>` blocks allowed by their SHA-256
/// hashes, nothing else inline (no `'unsafe-inline'`: a script that an injected string smuggled into the page,
/// an `on…=` attribute or a `style=` attribute, does not run), no other origin but the camera's, no framing.
package struct ContentSecurityPolicy: Hashable, Sendable {
    /// The hash sources of the page's inline scripts, in page order (`'sha256-…'`).
    package let scripts: [String]
    /// The hash sources of the page's inline style blocks.
    package let styles: [String]
    /// The header's value.
    package let header: String

    /// The policy for `html`; `camera`: an image origin beside the page's own and `data:`.
    package init(html: String, camera: CameraURL? = nil) {
        scripts = Self.hashes(of: "script", in: html)
        styles = Self.hashes(of: "style", in: html)
        let images = camera.map { "data: 'self' \($0.origin)" } ?? "data: 'self'"
        let scriptSources = scripts.isEmpty ? "'none'" : scripts.joined(separator: " ")
        let styleSources = styles.isEmpty ? "'none'" : styles.joined(separator: " ")
        header = "default-src 'none'; script-src \(scriptSources); style-src \(styleSources); img-src \(images); "
            + "connect-src 'self'; manifest-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    /// The policy of a response that is not a page (text, JSON, an icon): nothing runs, nothing is framed.
    package static let noPage = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

    /// `'sha256-…'` of the text of every `<tag>…</tag>` block (the exact text between the tags, as browsers hash it).
    package static func hashes(of tag: String, in html: String) -> [String] {
        var found: [String] = []
        var rest = html[...]
        while let open = rest.firstRange(of: "<\(tag)>") {
            guard let close = rest[open.upperBound...].firstRange(of: "</\(tag)>") else { break }
            let body = rest[open.upperBound..<close.lowerBound]
            let digest = SHA256.hash(data: Array(body.utf8))
            found.append("'sha256-\(Data(digest).base64EncodedString())'")
            rest = rest[close.upperBound...]
        }
        return found
    }
}
