// A small JSON reader for the wire format: one object per line, scalars kept, nested values skipped.
//
// Invariants: it reads at most the bytes it is given (a line is already bounded by the reader, see
// `LineSplitter`), nests at most `maximumDepth` levels (deeper input is malformed, so recursion is bounded),
// and never traps on any input: every failure is a thrown `WireJSON.Failure`.

/// A scalar of a wire object; objects and arrays nested in a line are skipped (`nested`).
enum WireValue: Equatable, Sendable {
    case null
    case bool(Bool)
    case number(Double, integer: Int64?)
    case string(String)
    case nested
}

enum WireJSON {
    struct Failure: Error, Equatable { let message: String }

    static let maximumDepth = 32

    /// The top-level object of `bytes` (surrounding white space allowed), its members by name; a name
    /// repeated keeps its last value.
    static func object(_ bytes: [UInt8]) throws(Failure) -> [String: WireValue] {
        var parser = Parser(bytes: bytes)
        parser.skipSpace()
        guard parser.peek == UInt8(ascii: "{") else { throw Failure(message: "not a JSON object") }
        let members = try parser.objectMembers(depth: 0)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw Failure(message: "text after the object") }
        return members ?? [:]
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Failure) {
            guard peek == byte else { throw Failure(message: "expected '\(Character(Unicode.Scalar(byte)))'") }
            index += 1
        }

        /// Parses an object; returns its members at depth 0 only (nested objects are skipped, `nil`).
        mutating func objectMembers(depth: Int) throws(Failure) -> [String: WireValue]? {
            guard depth < WireJSON.maximumDepth else { throw Failure(message: "nested too deeply") }
            try expect(UInt8(ascii: "{"))
            var members: [String: WireValue] = [:]
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return depth == 0 ? members : nil
            }
            while true {
                skipSpace()
                let name = try string()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                let value = try self.value(depth: depth + 1)
                if depth == 0 { members[name] = value }
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return depth == 0 ? members : nil
            }
        }

        mutating func value(depth: Int) throws(Failure) -> WireValue {
            skipSpace()
            guard let byte = peek else { throw Failure(message: "truncated") }
            switch byte {
            case UInt8(ascii: "{"):
                _ = try objectMembers(depth: depth)
                return .nested
            case UInt8(ascii: "["):
                try array(depth: depth)
                return .nested
            case UInt8(ascii: "\""):
                return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default:
                return try number()
            }
        }

        mutating func array(depth: Int) throws(Failure) {
            guard depth < WireJSON.maximumDepth else { throw Failure(message: "nested too deeply") }
            try expect(UInt8(ascii: "["))
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return
            }
            while true {
                _ = try value(depth: depth + 1)
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return
            }
        }

        mutating func literal(_ word: String) throws(Failure) {
            let expected = Array(word.utf8)
            guard bytes.count - index >= expected.count else { throw Failure(message: "truncated") }
            guard bytes[index..<index + expected.count].elementsEqual(expected) else {
                throw Failure(message: "unknown literal")
            }
            index += expected.count
        }

        mutating func number() throws(Failure) -> WireValue {
            let start = index
            if peek == UInt8(ascii: "-") { index += 1 }
            var isInteger = true
            var digits = 0
            while let byte = peek {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"): isInteger = false
                case UInt8(ascii: "-") where index > start: isInteger = false
                default:
                    break
                }
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+")
                    || (byte == UInt8(ascii: "-") && index > start)
                else { break }
                index += 1
            }
            guard digits > 0, index - start <= 64 else { throw Failure(message: "not a number") }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            guard let double = Double(text), double.isFinite else { throw Failure(message: "not a number") }
            return .number(double, integer: isInteger ? Int64(text) : nil)
        }

        mutating func string() throws(Failure) -> String {
            try expect(UInt8(ascii: "\""))
            var scalars = String.UnicodeScalarView()
            var run = index  // start of the bytes not yet copied
            var pendingHighSurrogate: UInt32?
            func flush(_ parser: Parser, upTo end: Int) {
                if end > run { scalars.append(contentsOf: String(decoding: parser.bytes[run..<end], as: UTF8.self).unicodeScalars) }
            }
            while true {
                guard let byte = peek else { throw Failure(message: "truncated string") }
                if byte == UInt8(ascii: "\"") {
                    flush(self, upTo: index)
                    index += 1
                    return String(scalars)
                }
                if byte < 0x20 { throw Failure(message: "control character in a string") }
                if byte != UInt8(ascii: "\\") {
                    index += 1
                    continue
                }
                flush(self, upTo: index)
                index += 1
                guard let escape = peek else { throw Failure(message: "truncated string") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    guard bytes.count - index >= 4,
                        let code = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
                    else { throw Failure(message: "bad \\u escape") }
                    index += 4
                    if (0xD800...0xDBFF).contains(code) {
                        pendingHighSurrogate = code
                    } else if (0xDC00...0xDFFF).contains(code), let high = pendingHighSurrogate {
                        let combined = 0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
                        scalars.append(Unicode.Scalar(combined) ?? "\u{FFFD}")
                        pendingHighSurrogate = nil
                    } else {
                        scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")  // a lone surrogate: replaced
                    }
                    run = index
                    continue
                default:
                    throw Failure(message: "bad escape")
                }
                if pendingHighSurrogate != nil {
                    scalars.append("\u{FFFD}")
                    pendingHighSurrogate = nil
                }
                run = index
            }
        }
    }
}
