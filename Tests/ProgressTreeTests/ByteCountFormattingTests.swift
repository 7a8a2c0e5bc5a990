@testable import ProgressTree
import XCTest

/// `ProgressFormat.byteCount`: Apple's file-size shapes (decimal units, 0/1/2 fraction digits, trailing
/// zeros dropped), exact half-to-even rounding, promotion to the next unit, and every `Int64`.
final class ByteCountFormattingTests: XCTestCase {
    func test_apple_shapes() {
        let table: [(Int64, String)] = [
            (0, "Zero KB"), (1, "1 byte"), (2, "2 bytes"), (999, "999 bytes"),
            (1000, "1 KB"), (123_000, "123 KB"), (419_300, "419 KB"), (999_499, "999 KB"),
            (5_300_000, "5.3 MB"), (789_100_000, "789.1 MB"), (2_000_000, "2 MB"), (3_300_000, "3.3 MB"),
            (1_610_612_736, "1.61 GB"), (3_221_225_472, "3.22 GB"), (103_920_000_000, "103.92 GB"),
            (2_000_000_000, "2 GB"), (2_500_000_000, "2.5 GB"), (1_000_000_000_000, "1 TB"),
            (1_234_567_890_123_456, "1.23 PB"), (9_223_372_036_854_775_807, "9.22 EB"),
        ]
        for (bytes, text) in table {
            XCTAssertEqual(ProgressFormat.byteCount(bytes), text, "\(bytes)")
        }
    }

    func test_rounding_is_half_to_even_and_exact() {
        let table: [(Int64, String)] = [
            (1_499, "1 KB"), (1_500, "2 KB"), (2_500, "2 KB"), (2_501, "3 KB"), (3_500, "4 KB"),
            (5_250_000, "5.2 MB"), (5_350_000, "5.4 MB"), (5_250_001, "5.3 MB"),
            (1_605_000_000, "1.6 GB"), (1_615_000_000, "1.62 GB"), (1_604_999_999, "1.6 GB"),
        ]
        for (bytes, text) in table {
            XCTAssertEqual(ProgressFormat.byteCount(bytes), text, "\(bytes)")
        }
    }

    func test_a_value_that_rounds_up_to_a_thousand_moves_to_the_next_unit() {
        XCTAssertEqual(ProgressFormat.byteCount(999_500), "1 MB", "not \"1,000 KB\"")
        XCTAssertEqual(ProgressFormat.byteCount(999_999), "1 MB")
        XCTAssertEqual(ProgressFormat.byteCount(999_949_999), "999.9 MB")
        XCTAssertEqual(ProgressFormat.byteCount(999_950_000), "1 GB")
        XCTAssertEqual(ProgressFormat.byteCount(999_995_000_000), "1 TB")
    }

    func test_negative_counts_and_the_extremes() {
        XCTAssertEqual(ProgressFormat.byteCount(-1), "-1 byte")
        XCTAssertEqual(ProgressFormat.byteCount(-5_300_000), "-5.3 MB")
        XCTAssertEqual(ProgressFormat.byteCount(.min), "-9.22 EB")
        XCTAssertEqual(ProgressFormat.byteCount(.max), "9.22 EB")
    }

    func test_throughput() {
        XCTAssertEqual(ProgressFormat.throughput(2000), "2 KB/s")
        XCTAssertEqual(ProgressFormat.throughput(1), "1 byte/s")
        XCTAssertEqual(ProgressFormat.throughput(789_100_000), "789.1 MB/s")
        XCTAssertEqual(ProgressFormat.throughput(.max), "9.22 EB/s")
        XCTAssertNil(ProgressFormat.throughput(0))
        XCTAssertNil(ProgressFormat.throughput(-2000))
    }
}

/// The completed bytes a display shows beside the total (the terminal's counts column).
final class CompletedByteCountTests: XCTestCase {
    func test_zero_is_zero_bytes_not_zero_KB() {
        XCTAssertEqual(ProgressFormat.completedByteCount(0, of: 4_200_000), "0 bytes")
    }

    func test_an_amount_short_of_its_total_never_reads_as_the_total() {
        XCTAssertEqual(ProgressFormat.completedByteCount(1_970_000, of: 2_000_000), "1.9 MB")
        XCTAssertEqual(ProgressFormat.completedByteCount(999_999, of: 1_000_000), "999 KB")
        XCTAssertEqual(ProgressFormat.completedByteCount(1_260_000, of: 1_700_000), "1.2 MB")
    }

    func test_a_complete_amount_is_formatted_as_the_total_is() {
        XCTAssertEqual(ProgressFormat.completedByteCount(2_000_000, of: 2_000_000), "2 MB")
        XCTAssertEqual(ProgressFormat.completedByteCount(5, of: 10), "5 bytes")
    }

    func test_the_terminal_details_of_a_file_copy_say_0_bytes_and_round_down() {
        let file = ProgressNode(totalUnitCount: 2_000_000)
        file.kind = .file
        file.fileOperationKind = .copying
        file.fileTotalCount = 1
        XCTAssertEqual(file.displayDetails.amount, "0 bytes of 2 MB")
        XCTAssertEqual(file.localizedAdditionalDescription, "Zero KB of 2 MB", "Apple's description is unchanged")
        file.completedUnitCount = 1_970_000
        XCTAssertEqual(file.displayDetails.amount, "1.9 MB of 2 MB")
    }
}
