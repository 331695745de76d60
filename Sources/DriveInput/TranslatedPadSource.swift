import DriveInputModel

/// A pad whose frames are translated to the standard layout of its GameControllerDB entry before anyone
/// sees them: the mapping downstream only ever sees the standard codes.
public final class TranslatedPadSource: InputSource {
    private let source: any InputSource
    private var translator: PadTranslator
    /// Called with every translated frame (a frame the layout leaves empty is not passed on).
    public var onFrame: ((InputFrame) -> Void)?
    /// Called with every frame as the pad gave it, its axes showing the values the translation gave them
    /// (`PadTranslator.showingMappedValues`), before the translated frame is passed on (`carbridge monitor`).
    public var onUntranslatedFrame: ((InputFrame) -> Void)?
    /// The pad's own loss.
    public var onGone: ((String) -> Void)? {
        get { source.onGone }
        set { source.onGone = newValue }
    }

    /// `source` translated through `translator`.
    public init(_ source: any InputSource, translator: PadTranslator) {
        self.source = source
        self.translator = translator
        // `deinit` takes the callback back: it never outlives this.
        source.onFrame = { [unowned self] frame in self.received(frame) }
    }

    deinit {
        source.onFrame = nil
    }

    public var description: String { source.description }

    /// The layout frames are translated through.
    public var layout: PadLayout { translator.layout }

    public func start() throws { try source.start() }

    public func stop() { source.stop() }

    /// `frame` (in the pad's own codes) in the standard layout; nil when the layout leaves nothing of it.
    public func translate(_ frame: InputFrame) -> InputFrame? { translator.translate(frame) }

    private func received(_ frame: InputFrame) {
        let translated = translator.translate(frame)
        if let onUntranslatedFrame { onUntranslatedFrame(translator.showingMappedValues(frame)) }
        guard let translated else { return }
        onFrame?(translated)
    }
}
