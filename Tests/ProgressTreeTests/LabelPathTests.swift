import Foundation
import ProgressTree
import XCTest

/// `labelPath`: the labels a tree display gives a node and its ancestors, root first.
final class LabelPathTests: XCTestCase {
    func test_a_nodes_label_path_names_its_labelled_ancestors_root_first() {
        let root = ProgressNode.discreteProgress(totalUnitCount: 2)
        root.localizedDescription = "Import"
        let generic = ProgressNode(totalUnitCount: 1, parent: root, pendingUnitCount: 1)
        let photo = ProgressNode(totalUnitCount: 1, parent: generic, pendingUnitCount: 1)
        photo.localizedDescription = "IMG_0004.jpg"
        XCTAssertEqual(photo.labelPath, ["Import", "IMG_0004.jpg"], "a generic node without a label is left out")
        XCTAssertEqual(root.labelPath, ["Import"])
        XCTAssertEqual(generic.labelPath, ["Import"])
        let file = ProgressNode(totalUnitCount: 10, parent: photo, pendingUnitCount: 0)
        file.kind = .file
        file.fileURL = URL(fileURLWithPath: "/tmp/IMG_0004.jpg")
        file.fileOperationKind = .downloading
        XCTAssertEqual(file.labelPath, ["Import", "IMG_0004.jpg", "Downloading “IMG_0004.jpg”…"])
    }
}
