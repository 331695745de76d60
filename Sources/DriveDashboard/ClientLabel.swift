/// What kind of device a dashboard connection comes from, read from its upgrade request's `User-Agent`, so
/// the other tabs can be told who drives ("phone 2 (Android) is driving: wait for your turn").
package struct ClientLabel: Hashable, Sendable {
    /// The platform's short name: Android, iPhone, iPad, Windows, Mac, Linux, or browser.
    package var platform: String
    /// True for a phone or tablet.
    package var isPhone: Bool

    /// The label of `userAgent` (nil or unknown: a browser).
    package static func device(userAgent: String?) -> ClientLabel {
        let agent = userAgent ?? ""
        // Order matters: Android's agent says Linux, an iPhone's says "like Mac OS X".
        let phones = [("Android", "Android"), ("iPhone", "iPhone"), ("iPad", "iPad")]
        for (marker, name) in phones where agent.contains(marker) { return ClientLabel(platform: name, isPhone: true) }
        let desktops = [("Windows", "Windows"), ("Macintosh", "Mac"), ("Linux", "Linux"), ("CrOS", "ChromeOS")]
        for (marker, name) in desktops where agent.contains(marker) { return ClientLabel(platform: name, isPhone: false) }
        return ClientLabel(platform: "browser", isPhone: false)
    }

    /// The label of connection `client`: "phone 2 (Android)", "browser 3 (Linux)".
    package func label(client: Int) -> String {
        "\(isPhone ? "phone" : "browser") \(client) (\(platform))"
    }
}
