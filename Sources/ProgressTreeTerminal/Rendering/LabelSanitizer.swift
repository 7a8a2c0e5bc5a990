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
