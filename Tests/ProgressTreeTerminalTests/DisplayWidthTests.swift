@testable import ProgressTreeTerminal
import XCTest

final class DisplayWidthTests: XCTestCase {
    func test_ascii_wide_and_emoji_widths() {
        XCTAssertEqual(DisplayWidth.of("photo.jpg"), 9)
        XCTAssertEqual(DisplayWidth.of("写真"), 4)
        XCTAssertEqual(DisplayWidth.of("📷 ok"), 5)
        XCTAssertEqual(DisplayWidth.of("e\u{301}"), 1)  // e + combining acute: one column
        XCTAssertEqual(DisplayWidth.of("한국어"), 6)
        XCTAssertEqual(DisplayWidth.of("ＡＢ"), 4)  // fullwidth Latin
    }

    func test_truncation_counts_columns_not_bytes() {
        XCTAssertEqual(DisplayWidth.truncate("写真写真写真", toColumns: 7), "写真写…")
        XCTAssertEqual(DisplayWidth.of(DisplayWidth.truncate("写真写真写真", toColumns: 7)), 7)
        XCTAssertEqual(DisplayWidth.truncate("abc", toColumns: 3), "abc")
        XCTAssertEqual(DisplayWidth.truncate("abcd", toColumns: 3), "ab…")
        XCTAssertEqual(DisplayWidth.pad("写", toColumns: 4), "写  ")
    }
}
