import Foundation
import TestSupport
import XCTest

/// The name fetch saves a download under, as its `--help` says: the last component of the URL's path, or
/// "index.html" when the path names a folder.
final class FetchFileNameTests: XCTestCase {
    func test_a_url_ending_in_a_slash_is_saved_as_index_html() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fetch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let page = Data("<html>sub</html>\n".utf8)
        let top = Data("<html>top</html>\n".utf8)
        let server = try TestHTTPServer(files: ["sub/": page, "": top], chunkSize: 65_536)
        defer { server.stop() }
        let sub = try FileCopyProcess.run(
            [server.url("sub/"), "--output", folder.path, "--progress", "none"], named: "fetch")
        XCTAssertEqual(sub.status, 0, sub.standardError)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["index.html"])
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("index.html")), page)
        try FileManager.default.removeItem(at: folder.appendingPathComponent("index.html"))
        let root = try FileCopyProcess.run(
            [server.url(""), "--output", folder.path, "--progress", "none"], named: "fetch")
        XCTAssertEqual(root.status, 0, root.standardError)
        XCTAssertEqual(try Data(contentsOf: folder.appendingPathComponent("index.html")), top)
    }
}
