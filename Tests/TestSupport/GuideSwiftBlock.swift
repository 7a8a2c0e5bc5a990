/// A fenced ```swift block of a Markdown guide, with the line that introduces it.
package struct GuideSwiftBlock: Sendable {
    /// The last non-empty line above the block: `<!-- snippet: NAME -->`, `<!-- manifest -->`, or prose.
    package var marker: String
    /// The block's lines, without the fences.
    package var lines: [String]

    /// `NAME` when the block is marked `<!-- snippet: NAME -->`.
    package var snippetName: String? {
        guard marker.hasPrefix("<!-- snippet: "), marker.hasSuffix(" -->") else { return nil }
        return String(marker.dropFirst("<!-- snippet: ".count).dropLast(" -->".count))
    }

    /// The ```swift blocks of `markdown`, in order.
    package static func all(in markdown: String) -> [GuideSwiftBlock] {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var blocks: [GuideSwiftBlock] = []
        var index = 0
        while index < lines.count {
            defer { index += 1 }
            guard lines[index] == "```swift" else { continue }
            let marker = lines[..<index].last { !$0.isEmpty } ?? ""
            var block: [String] = []
            index += 1
            while index < lines.count, lines[index] != "```" {
                block.append(lines[index])
                index += 1
            }
            blocks.append(GuideSwiftBlock(marker: marker, lines: block))
        }
        return blocks
    }
}
