// A node's place in its tree, in words: the labels a tree display gives it and its ancestors.

extension ProgressNode {
    /// The labels of this node's attached ancestors and of this node, root first, as a tree display names
    /// them: a description set by the program (`localizedDescription`), or the default of a file node
    /// ("Downloading “photo.jpg”…"); a generic node without one is left out. What a log line can carry to
    /// say which work it is about: `labelPath.joined(separator: " › ")` is "Import › IMG_0004.jpg", as a
    /// plain-mode line names the node.
    ///
    /// Thread safety: any thread; one node lock at a time, so an ancestor that finishes meanwhile may or may
    /// not be in it. Complexity: O(depth).
    public var labelPath: [String] {
        var labels: [String] = []
        var node: ProgressNode? = self
        while let current = node {
            if let label = current.displayLabel { labels.append(label) }
            node = current.parent
        }
        return labels.reversed()
    }
}
