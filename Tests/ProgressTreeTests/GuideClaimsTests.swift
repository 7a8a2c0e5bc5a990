import Foundation
import XCTest

/// What the guides say about the package that the sources decide: the library products GettingStarted
/// lists, and the messages Migrating quotes for `addChild` (CompositionPreconditionTests checks that the
/// program prints them).
final class GuideClaimsTests: XCTestCase {
    private static let root = URLPath.packageRoot(of: #filePath)

    private func read(_ path: String) throws -> String {
        try String(contentsOfFile: Self.root + "/" + path, encoding: .utf8)
    }

    func test_getting_started_lists_every_library_product_and_counts_them() throws {
        let manifest = try read("Package.swift")
        let products = manifest.matches(of: /\.library\(name: "([A-Za-z]+)"/).map { String($0.output.1) }
        XCTAssertEqual(products.count, 5)
        let guide = try read("Docs/GettingStarted.md")
        for product in products {
            XCTAssertTrue(guide.contains("| `\(product)` | `import \(product)` |"), "\(product) is not in the table")
        }
        let words = ["one", "two", "three", "four", "five", "six", "seven"]
        XCTAssertTrue(
            guide.contains("The package has \(words[products.count - 1]) library products:"),
            "the count of library products")
    }

    func test_migrating_quotes_the_messages_add_child_stops_with() throws {
        let guide = try read("Docs/Migrating.md")
        for message in [
            "addChild(_:withPendingUnitCount:): the child already has a parent; a node can be added to one parent only",
            "was already added to a parent, finished and was detached from it",
        ] {
            XCTAssertTrue(guide.contains(message), message)
        }
        let source = try read("Sources/ProgressTree/Core/ProgressNode+Composition.swift")
        XCTAssertTrue(source.contains("the child already has a parent; a node can be added to one parent only"))
        XCTAssertTrue(source.contains("was already added to a parent, finished and was \""))
    }
}
