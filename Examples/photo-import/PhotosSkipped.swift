import ProgressTree

/// Photos the import skipped because the library has them already: a count each photo's node sets, kept in
/// the album when the photo finishes (the default `summaryLeftBehind`), so the album's summary is the number
/// of photos skipped so far, shown on its line ("Importing 12 photos · 3 skipped") and in the summary.
enum PhotosSkipped: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }

    /// The words for the album's line: nothing until a photo was skipped.
    @Sendable static func words(_ skipped: Int) -> String? {
        skipped == 0 ? nil : "\(skipped) skipped"
    }
}
