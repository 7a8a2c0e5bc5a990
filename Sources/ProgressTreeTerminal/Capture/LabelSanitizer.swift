/// Makes a label safe to draw on one terminal line.
///
/// A label is user data (a file name can hold a line break): a control character in it would move the
/// cursor, break the live area's line count, or split a log line. Each C0 control (U+0000–U+001F), DEL
/// (U+007F) and C1 control (U+0080–U+009F) becomes a space; everything else is kept.
enum LabelSanitizer {
    static func sanitized(_ label: String) -> String {
        guard label.unicodeScalars.contains(where: isControl) else { return label }  // the usual case: no copy
        var scalars = String.UnicodeScalarView()
        for scalar in label.unicodeScalars {
            scalars.append(isControl(scalar) ? " " : scalar)
        }
        return String(scalars)
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }
}

/// Text from outside the program (a file name, a message) made safe to write to a terminal.
public enum TerminalText {
    /// `text` with each control character (C0 including line breaks, DEL, C1) shown as a space: written
    /// to a terminal, it cannot move the cursor, change colours or start a new line. The renderer does
    /// this to every label and printed message; use it for what you write yourself, such as a summary
    /// that names a file.
    public static func printable(_ text: String) -> String {
        LabelSanitizer.sanitized(text)
    }
}
