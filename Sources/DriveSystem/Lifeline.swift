/// What the callbacks that may run after an object is gone hold instead of the object: they hold the lifeline
/// weakly and it holds its owner unowned. Only the owner keeps its lifeline, so a callback finds it gone once
/// the owner is, exactly as a weak reference to the owner would — without the weak reference.
///
/// Why: the first weak reference to an object gives it a side table, and from then on every retain and
/// release of it takes the Swift runtime's slow path (about 60 instead of 5 instructions). The objects on the
/// per-report path (the input coordinator, the bridge) are retained several times per report; their cold
/// callbacks (udev, a permission retry, a link's state, a flush's end) go through a lifeline instead.
public final class Lifeline<Owner: AnyObject> {
    /// The object this lifeline belongs to; valid while the lifeline can be reached (its owner holds it).
    public unowned let owner: Owner

    /// A lifeline for `owner`, which must be its only holder.
    public init(_ owner: Owner) { self.owner = owner }
}
