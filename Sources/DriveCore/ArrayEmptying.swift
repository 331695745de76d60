extension Array {
    /// Removes every element and keeps the storage, as `removeAll(keepingCapacity: true)` does, for the short
    /// arrays the per-report path reuses. That call goes through the generic `replaceSubrange`: about 65
    /// instructions whatever the count, also for an empty array. Removing the last element until none is left
    /// costs a few instructions per element and nothing when the array is empty, so it is used up to 4.
    @inlinable
    public mutating func removeAllKeepingStorage() {
        if count > 4 { return removeAll(keepingCapacity: true) }
        while !isEmpty { removeLast() }
    }
}
