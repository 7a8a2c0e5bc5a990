import ProgressTree

let album = ProgressNode(totalUnitCount: 3)
for _ in 0..<3 {
    let photo = ProgressNode(totalUnitCount: 10, parent: album, pendingUnitCount: 1)
    let download = ProgressNode(totalUnitCount: 100, parent: photo, pendingUnitCount: 9)
    for _ in 0..<4 { download.advance(by: 25); print(album.fractionCompleted) }
    photo.advance()
}
print(album.fractionCompleted, album.isFinished)
