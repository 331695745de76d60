extension CarbridgeConfig {
    /// True when the file has a `[buttons]` table of its own: its names are the pad's own evdev codes
    /// (read off `carbridge monitor`), so no GameControllerDB layout is put in between.
    public var hasButtonsTable: Bool {
        buttons.contains { $0.line != nil } || lines.keys.contains { $0.hasPrefix("buttons.") && !$0.hasPrefix("buttons.long_press.") }
    }
}
