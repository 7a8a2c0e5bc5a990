import ProgressTree
import ProgressTreePlatform

// A small JSON reader for the wire format: one object per line, scalars kept, nested values skipped except
// the top-level `properties` object, whose crossable values are kept (`WireValue.properties`).
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
    /// The top-level member `properties`, an object: its crossable values by name, and how many of its
    /// entries were not crossable values (skipped).
    case properties([String: ProgressWireValue], skipped: Int)
}

enum WireJSON {
    struct Failure: Error, Equatable { let message: String }

    static let maximumDepth = 32

    /// The top-level object of `bytes` (surrounding white space allowed), its members by name; a name
    /// repeated keeps its last value.
    static func object(_ bytes: [UInt8]) throws(Failure) -> [String: WireValue] {
        var members: [String: WireValue] = [:]
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(Failure) in
                try forEachMember(of: raw) { (name, value) throws(Failure) in
                    members[String(decoding: name, as: UTF8.self)] = value
                }
            }
        }
        try result.get()
        return members
    }

    /// Calls `visit` with the name (its bytes, unescaped) and value of each member of the top-level object
    /// of `bytes` (surrounding white space allowed), in order, as they are read: when it throws, members
    /// before the fault were visited (the caller discards what it made of them).
    static func forEachMember(
        of bytes: UnsafeRawBufferPointer, _ visit: (UnsafeRawBufferPointer, WireValue) throws(Failure) -> Void
    ) throws(Failure) {
        try forEachMemberWithSpan(of: bytes) { (name, value, _) throws(Failure) in try visit(name, value) }
    }

    /// `forEachMember`, also giving each member's span in `bytes`: from its name's opening quote to the
    /// end of its value. A name without escapes is handed where it lies in `bytes` (at the span's start
    /// plus one); an escaped one, unescaped elsewhere.
    static func forEachMemberWithSpan(
        of bytes: UnsafeRawBufferPointer,
        _ visit: (UnsafeRawBufferPointer, WireValue, Range<Int>) throws(Failure) -> Void
    ) throws(Failure) {
        var parser = Parser(bytes: bytes)
        parser.skipSpace()
        guard parser.peek == UInt8(ascii: "{") else { throw Failure(message: "not a JSON object") }
        try parser.objectMembers(depth: 0, visit)
        parser.skipSpace()
        guard parser.index == bytes.count else { throw Failure(message: "text after the object") }
    }

    /// Reads the members that fill exactly `span` of `bytes` (`"a":1,"b":2`, no braces), each name without
    /// escapes, visiting each with its name (where it lies), value and span; throws unless they end
    /// exactly at the end of `span`. For re-reading the part of a line that changed (`WireLineMemo`).
    static func forEachMember(
        of bytes: UnsafeRawBufferPointer, in span: Range<Int>,
        _ visit: (UnsafeRawBufferPointer, WireValue, Range<Int>) throws(Failure) -> Void
    ) throws(Failure) {
        guard span.lowerBound >= 0, span.upperBound <= bytes.count else { throw Failure(message: "out of bounds") }
        var parser = Parser(bytes: UnsafeRawBufferPointer(rebasing: bytes[..<span.upperBound]))
        parser.index = span.lowerBound
        while true {
            let start = parser.index
            guard let nameEnd = parser.plainStringEnd(from: start + 1) else { throw Failure(message: "escaped name") }
            parser.index = nameEnd + 1
            parser.skipSpace()
            try parser.expect(UInt8(ascii: ":"))
            let name = UnsafeRawBufferPointer(rebasing: bytes[(start + 1)..<nameEnd])
            let value = try parser.topLevelValue(isProperties: Parser.isPropertiesName(name))
            try visit(name, value, start..<parser.index)
            if parser.index == span.upperBound { return }
            parser.skipSpace()
            try parser.expect(UInt8(ascii: ","))
            parser.skipSpace()
        }
    }

    private struct Parser {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func expect(_ byte: UInt8) throws(Failure) {
            guard peek == byte else { throw Failure(message: "expected '\(Character(Unicode.Scalar(byte)))'") }
            index += 1
        }

        /// Parses an object, visiting each member as it is read (nested objects are parsed with a visit
        /// that keeps nothing).
        mutating func objectMembers(
            depth: Int, _ visit: (UnsafeRawBufferPointer, WireValue, Range<Int>) throws(Failure) -> Void
        ) throws(Failure) {
            guard depth < WireJSON.maximumDepth else { throw Failure(message: "nested too deeply") }
            try expect(UInt8(ascii: "{"))
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return
            }
            while true {
                skipSpace()
                let memberStart = index
                // A name without escapes (the usual case) is visited where it is, with no copy.
                let plainEnd = plainStringEnd(from: index + 1)
                let nameStart = index + 1
                let spelled: [UInt8]?
                if let plainEnd {
                    index = plainEnd + 1
                    spelled = nil
                } else {
                    spelled = Array(try string().utf8)
                }
                skipSpace()
                try expect(UInt8(ascii: ":"))
                let value: WireValue
                if depth > 0 {
                    value = try self.value(depth: depth + 1)
                } else if let spelled {
                    value = try topLevelValue(isProperties: spelled.elementsEqual("properties".utf8))
                } else {
                    let name = UnsafeRawBufferPointer(rebasing: bytes[nameStart..<(plainEnd ?? nameStart)])
                    value = try topLevelValue(isProperties: Self.isPropertiesName(name))
                }
                if let spelled {
                    let span = memberStart..<index
                    let result = spelled.withUnsafeBytes { name in
                        Result { () throws(Failure) in try visit(name, value, span) }
                    }
                    try result.get()
                } else if let plainEnd {
                    try visit(UnsafeRawBufferPointer(rebasing: bytes[nameStart..<plainEnd]), value, memberStart..<index)
                }
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return
            }
        }

        /// Where the string starting at `start` (after its quote) ends, if it holds no escape and no control
        /// character: the index of its closing quote.
        func plainStringEnd(from start: Int) -> Int? {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let base = bytes.baseAddress else {
                return nil
            }
            let characters = base.assumingMemoryBound(to: UInt8.self)
            var end = start
            // Eight bytes at a time while none of them is a quote, a backslash or a control character.
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while end + 8 <= bytes.count {
                let word = UInt64(littleEndian: UnsafeRawPointer(characters + end).loadUnaligned(as: UInt64.self))
                let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
                let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
                // A byte is zero in `x` (or below 0x20 in `word`) when its high bit survives in these.
                let quote = (quotes &- ones) & ~quotes
                let backslash = (backslashes &- ones) & ~backslashes
                let control = (word &- ones &* 0x20) & ~word
                let found = quote | backslash | control
                if found & highs != 0 { break }
                end += 8
            }
            while end < bytes.count {
                let byte = characters[end]
                if byte == UInt8(ascii: "\"") { return end }
                if byte == UInt8(ascii: "\\") || byte < 0x20 { return nil }
                end += 1
            }
            return nil
        }

        /// Whether a member's (unescaped) name is `properties`.
        static func isPropertiesName(_ name: UnsafeRawBufferPointer) -> Bool {
            let properties: StaticString = "properties"
            return UnsafeRawBufferPointer(start: properties.utf8Start, count: properties.utf8CodeUnitCount)
                .hasSameBytes(as: name)
        }

        /// The value of a member of the top-level object: `properties` (`isProperties`) read with its values
        /// when it is an object, any other member as `value(depth:)` reads it.
        mutating func topLevelValue(isProperties: Bool) throws(Failure) -> WireValue {
            skipSpace()
            guard isProperties, peek == UInt8(ascii: "{") else { return try value(depth: 1) }
            var values: [String: ProgressWireValue] = [:]
            var skipped = 0
            try expect(UInt8(ascii: "{"))
            skipSpace()
            if peek == UInt8(ascii: "}") {
                index += 1
                return .properties(values, skipped: 0)
            }
            while true {
                skipSpace()
                let key = try string()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                if let crossable = try crossableValue() {
                    values[key] = crossable
                } else {
                    values[key] = nil  // a name repeated keeps its last value, even a skipped one
                    skipped += 1
                }
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "}"))
                return .properties(values, skipped: skipped)
            }
        }

        /// A property's value (depth 2), `nil` when it is valid JSON but no crossable value: `null`, an
        /// object, an array holding an array, an object or `null`, an integer beyond
        /// `ProgressWireValue.maximumInteger`.
        mutating func crossableValue() throws(Failure) -> ProgressWireValue? {
            skipSpace()
            guard peek == UInt8(ascii: "[") else { return Self.crossable(try value(depth: 2)) }
            try expect(UInt8(ascii: "["))
            var elements: [ProgressWireValue] = []
            var isCrossable = true
            skipSpace()
            if peek == UInt8(ascii: "]") {
                index += 1
                return .array([])
            }
            while true {
                if let element = Self.crossable(try value(depth: 3)) {
                    elements.append(element)
                } else {
                    isCrossable = false
                }
                skipSpace()
                if peek == UInt8(ascii: ",") {
                    index += 1
                    continue
                }
                try expect(UInt8(ascii: "]"))
                return isCrossable ? .array(elements) : nil
            }
        }

        /// A scalar as a crossable value; `nil` for `null`, a nested value or an integer out of range.
        static func crossable(_ value: WireValue) -> ProgressWireValue? {
            switch value {
            case .bool(let flag): return .bool(flag)
            case .string(let text): return .string(text)
            case .number(_, let integer?):
                return integer.magnitude <= UInt64(ProgressWireValue.maximumInteger) ? .integer(integer) : nil
            case .number(let number, nil): return .number(number)
            case .null, .nested, .properties: return nil
            }
        }

        mutating func value(depth: Int) throws(Failure) -> WireValue {
            skipSpace()
            guard let byte = peek else { throw Failure(message: "truncated") }
            switch byte {
            case UInt8(ascii: "{"):
                try objectMembers(depth: depth) { (_, _, _) throws(Failure) in }
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

        mutating func literal(_ word: StaticString) throws(Failure) {
            let expected = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard bytes.count - index >= expected.count else { throw Failure(message: "truncated") }
            guard
                UnsafeRawBufferPointer(rebasing: bytes[index..<index + expected.count]).hasSameBytes(as: expected)
            else {
                throw Failure(message: "unknown literal")
            }
            index += expected.count
        }

        mutating func number() throws(Failure) -> WireValue {
            // The usual case, an integer that fits Int64, without a string.
            let negative = peek == UInt8(ascii: "-")
            var digitsEnd = index + (negative ? 1 : 0)
            var magnitude: Int64 = 0
            var overflows = false
            while digitsEnd < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[digitsEnd]) {
                let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(Int64(bytes[digitsEnd] - UInt8(ascii: "0")))
                overflows = overflows || overflow1 || overflow2
                magnitude = sum
                digitsEnd += 1
            }
            let next = digitsEnd < bytes.count ? bytes[digitsEnd] : UInt8(ascii: " ")
            if digitsEnd > index + (negative ? 1 : 0), !overflows, next != UInt8(ascii: "."), next != UInt8(ascii: "e"),
                next != UInt8(ascii: "E")
            {
                index = digitsEnd
                let value = negative ? -magnitude : magnitude
                return .number(Double(value), integer: value)
            }
            // The next most usual, a decimal fraction of at most 15 digits and no exponent (a fraction, a
            // time): exact, as the quotient of two integers that a Double holds exactly (correctly rounded).
            let integerDigits = digitsEnd - index - (negative ? 1 : 0)
            if !overflows, next == UInt8(ascii: "."), integerDigits > 0,
                let decimal = decimal(integerPart: magnitude, integerDigits: integerDigits, from: digitsEnd + 1)
            {
                index = decimal.end
                return .number(negative ? -decimal.value : decimal.value, integer: nil)
            }
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
                guard
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
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

        /// The value of `integerPart` followed by the fraction digits from `start`, and where they end, if
        /// there is at least one, nothing but a delimiter follows, and all digits are at most 15 (so that
        /// the digits and the power of ten are exact Doubles); `nil` otherwise (the general path reads it).
        func decimal(integerPart: Int64, integerDigits: Int, from start: Int) -> (value: Double, end: Int)? {
            var digits = integerPart
            var end = start
            while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) {
                guard end - start + integerDigits < 15 else { return nil }
                digits = digits * 10 + Int64(bytes[end] - UInt8(ascii: "0"))
                end += 1
            }
            guard end > start, integerDigits <= 15 else { return nil }
            if end < bytes.count {
                let after = bytes[end]
                guard after != UInt8(ascii: "e"), after != UInt8(ascii: "E"), after != UInt8(ascii: "."),
                    after != UInt8(ascii: "-"), after != UInt8(ascii: "+")
                else { return nil }
            }
            let powers: (Double, Double, Double, Double, Double, Double, Double, Double) =
                (1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8)
            let scale = end - start
            let power: Double
            switch scale {
            case 1: power = powers.0
            case 2: power = powers.1
            case 3: power = powers.2
            case 4: power = powers.3
            case 5: power = powers.4
            case 6: power = powers.5
            case 7: power = powers.6
            case 8: power = powers.7
            default:
                var value = 1.0
                for _ in 0..<scale { value *= 10 }  // exact up to 1e22
                power = value
            }
            return (Double(digits) / power, end)
        }

        mutating func string() throws(Failure) -> String {
            // The usual case, no escape: one decoding of the bytes.
            if let end = plainStringEnd(from: index + 1) {
                defer { index = end + 1 }
                return String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
            }
            try expect(UInt8(ascii: "\""))
            var scalars = String.UnicodeScalarView()
            var run = index  // start of the bytes not yet copied
            var pendingHighSurrogate: UInt32?
            func flush(_ parser: Parser, upTo end: Int) {
                if end > run {
                    scalars.append(contentsOf: String(decoding: parser.bytes[run..<end], as: UTF8.self).unicodeScalars)
                }
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

extension UnsafeRawBufferPointer {
    /// Whether `self` and `other` hold the same bytes. The names and literals compared are a few dozen bytes
    /// at most, 25 names a line: a loop inlined here costs less than a call of `memcmp` in the platform
    /// module, which Swift does not inline across modules (that call made a line's parse 14% slower,
    /// `Tools/wire-cost`).
    @inline(__always)
    func hasSameBytes(as other: UnsafeRawBufferPointer) -> Bool {
        guard count == other.count else { return false }
        for index in 0..<count where self[index] != other[index] { return false }
        return true
    }
}
