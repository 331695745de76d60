// A link is made from its `LinkURL` and `LinkOptions`, so whoever opens links sees those values too.
@_exported import DriveLinkModel
