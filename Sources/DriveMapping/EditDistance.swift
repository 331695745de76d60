/// Levenshtein distance, for "did you mean …" suggestions.
public enum EditDistance {
    /// The edit distance between `a` and `b` (insertions, deletions, substitutions).
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// The candidate closest to `name` (case-insensitive), if it is close enough to be a likely typo:
    /// at most max(2, length / 3) edits. Ties go to the earliest candidate.
    public static func closest(to name: String, among candidates: [String]) -> String? {
        let target = name.uppercased()
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let d = distance(target, candidate.uppercased())
            if let current = best, d >= current.distance { continue }
            best = (candidate, d)
        }
        guard let best, best.distance <= max(2, target.count / 3) else { return nil }
        return best.name
    }
}
