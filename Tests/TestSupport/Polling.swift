import Foundation

/// Polls `condition` every 2 ms until it holds (`true`) or `seconds` pass (`false`): for effects of other
/// threads and processes that give nothing to wait on but the effect itself.
package func poll(seconds: Double, until condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        usleep(2_000)
    }
    return true
}
