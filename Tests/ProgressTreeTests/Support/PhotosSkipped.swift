import ProgressTree

/// The example: a count that every finished, failed or cancelled child leaves in full (the default
/// `summaryLeftBehind(_:by:)`). The tests of custom properties use it, and the model runs as their count,
/// `ModelSum` (Support/ModelRun.swift).
enum PhotosSkipped: ProgressProperty {
    static var defaultValue: Int { 0 }
    static var defaultSummary: Int { 0 }
    static func reduce(into summary: inout Int, value: Int) { summary += value }
    static func merge(_ a: Int, _ b: Int) -> Int { a + b }
}
