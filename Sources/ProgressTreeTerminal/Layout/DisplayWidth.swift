/// How many terminal columns text occupies: East Asian wide and fullwidth characters and emoji take two,
/// combining marks and zero-width characters none, everything else one.
///
/// Terminals lay out grapheme clusters (`Character`), so widths are computed per cluster: a cluster with
/// an emoji presentation (or an emoji followed by U+FE0F) is two columns; otherwise the width of its first
/// scalar. The wide ranges follow Unicode's East Asian Width property (W and F).
///
/// Public for programs that draw their own lines: cut a line to `columns − 1` with `truncate` so that it
/// never wraps.
public enum DisplayWidth {
    /// The columns `text` occupies (plain text: escape sequences are not recognized).
    public static func of(_ text: some StringProtocol) -> Int {
        if let width = simpleWidth(text) { return width }
        var width = 0
        for character in text { width += of(character) }
        return width
    }

    /// The width of text made only of scalars that are one column each and never combine (printable
    /// Latin, punctuation, arrows, box drawing, blocks, braille), or `nil`: a fast path that skips
    /// grapheme breaking for what progress lines are mostly made of.
    private static func simpleWidth(_ text: some StringProtocol) -> Int? {
        var width = 0
        for scalar in text.unicodeScalars {
            let value = scalar.value
            guard
                (0x20..<0x7F).contains(value) || (0xA0..<0x300).contains(value)
                    || (0x2010..<0x2060).contains(value) || (0x2190..<0x2300).contains(value)
                    || (0x2500..<0x2600).contains(value) || (0x2800..<0x2900).contains(value)
            else { return nil }
            width += 1
        }
        return width
    }

    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        if first.value < 0x7F { return first.value < 0x20 ? 0 : 1 }  // ASCII fast path
        if scalars.contains(where: { $0.properties.isEmojiPresentation })
            || (first.properties.isEmoji && scalars.contains(where: { $0.value == 0xFE0F }))
        {
            return 2
        }
        return width(of: first)
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        let value = scalar.value
        if value == 0x200B { return 0 }
        for range in wideRanges where range.contains(value) { return 2 }
        return 1
    }

    /// East Asian Wide (W) and Fullwidth (F) blocks.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF,
        0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3,
        0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
        0x16FE0...0x16FE4, 0x17000...0x18AFF, 0x1B000...0x1B16F, 0x1F200...0x1F2FF,
        0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]

    /// `text` cut to at most `columns` columns, ending in "…" when cut.
    public static func truncate(_ text: String, toColumns columns: Int) -> String {
        guard columns > 0 else { return "" }
        if of(text) <= columns { return text }
        var result = ""
        var used = 0
        for character in text {
            let width = of(character)
            if used + width > columns - 1 { break }
            result.append(character)
            used += width
        }
        return result + "…"
    }

    /// `text` cut to at most `columns` columns by taking out its middle, which becomes "…": the start and the
    /// end stay ("IMG_0…01.jpg"), the end getting the odd column.
    static func truncateMiddle(_ text: String, toColumns columns: Int) -> String {
        guard columns > 0 else { return "" }
        if of(text) <= columns { return text }
        let characters = Array(text)
        let headRoom = (columns - 1) / 2
        var head = ""
        var used = 0
        for character in characters {
            guard used + of(character) <= headRoom else { break }
            head.append(character)
            used += of(character)
        }
        var tail: [Character] = []
        var tailUsed = 0
        for character in characters.reversed() {
            guard tailUsed + of(character) <= columns - 1 - used else { break }
            tail.append(character)
            tailUsed += of(character)
        }
        return head + "…" + String(tail.reversed())
    }

    /// `text` padded with spaces (or cut) to exactly `columns` columns.
    public static func pad(_ text: String, toColumns columns: Int) -> String {
        let cut = truncate(text, toColumns: columns)
        let missing = columns - of(cut)
        return missing > 0 ? cut + String.repeated(" ", count: missing) : cut
    }
}
