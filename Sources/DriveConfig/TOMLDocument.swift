import CTOMLReader

/// A parsed TOML document: toml++ (through the `CTOMLReader` shim) owns the tree, this owns toml++'s result.
///
/// The nodes (`TOMLNode`) keep their document alive, so a table read from it stays valid as long as
/// someone holds it.
final class TOMLDocument {
    /// A TOML syntax error, as toml++ describes it, at the line (1-based) where it starts.
    struct SyntaxError: Error {
        let description: String
        let line: Int
    }

    private let handle: OpaquePointer

    /// Parses `text`; throws toml++'s first syntax error.
    init(text: String) throws(SyntaxError) {
        var text = text
        let parsed = text.withUTF8 { bytes in
            ctoml_parse(UnsafeRawPointer(bytes.baseAddress)?.assumingMemoryBound(to: CChar.self), bytes.count)
        }
        // NULL only when the shim could not allocate the result itself.
        guard let parsed else { throw SyntaxError(description: "out of memory while parsing", line: 1) }
        var line: UInt32 = 0
        var column: UInt32 = 0
        if let description = ctoml_document_error(parsed, &line, &column) {
            let error = SyntaxError(description: String(cString: description), line: Int(line))
            ctoml_document_free(parsed)
            throw error
        }
        handle = parsed
    }

    deinit { ctoml_document_free(handle) }

    /// The top-level table.
    var root: TOMLNode {
        // A document that parsed always has a root table (init threw otherwise).
        TOMLNode(document: self, pointer: ctoml_document_root(handle))
    }
}
