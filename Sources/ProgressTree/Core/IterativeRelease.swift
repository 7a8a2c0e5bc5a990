import ProgressTreePlatform

/// Releases nodes one after the other instead of one inside the other.
///
/// A node holds its attached children strongly. Released the default way, the root of an unfinished tree
/// would release every level from inside the `deinit` of the level above: one nest of stack frames per
/// level, which overflows a 512 KB stack (secondary threads and Dispatch workers on Apple platforms) at
/// about 2,000 levels in a debug build. Instead, a node going away (`ProgressNode.deinit`) hands its
/// children to the release loop already running on this thread, or starts one: the stack stays two
/// `deinit`s deep whatever the depth of the tree.
///
/// Only the children of a node already in its `deinit` are handed over: nobody else can reach that node any
/// more, so taking its children changes nothing anybody can observe.
enum IterativeRelease {
    /// Releases `nodes`, leaving the array empty. The caller must hold no other reference to the nodes it
    /// means to release: `inout`, so that no copy of the array outlives the loop below (a copy released
    /// after it would release the nodes, and recurse, just as before).
    static func release(_ nodes: inout [ProgressNode]) {
        if let running = releaseQueue.current {
            // Inside a `deinit` run by the loop below, on this thread: let that loop release them.
            running.nodes.append(contentsOf: nodes)
            nodes = []
            return
        }
        let queue = ReleaseQueue()
        swap(&queue.nodes, &nodes)
        releaseQueue.set(queue)
        while let node = queue.nodes.popLast() {
            _ = node  // released at the end of this iteration; its `deinit` may add to `queue.nodes`
        }
        releaseQueue.set(nil)
    }
}

/// The nodes waiting to be released by the loop running on one thread; only that thread touches it.
private final class ReleaseQueue {
    var nodes: [ProgressNode] = []
}

/// The loop running on each thread, while it runs.
private let releaseQueue = ThreadLocalReference<ReleaseQueue>()
