/// 64 bytes that nothing reads or writes once initialized: the last stored property of an object that its
/// tree's threads write on every update or read (`ChildSums`, `RefreshDomain`), so that the object's words
/// and those of whatever malloc places after it never share a 64-byte cache line.
///
/// Why: malloc puts objects of different trees side by side (two trees built by one thread; one tree's
/// blocks reused by the next), and a cache line that two cores write in turn moves between them on every
/// write (false sharing). Two threads, each updating and reading a tree of its own, ran at 0.7–1.3× the
/// speed of one (Docs/Performance.md, "One summary engine, and safety"). A node has no padding (its 102 bytes are
/// part of its design, `NodeSizeTests`): its words that updates and reads touch come first, so that the
/// 40 bytes after them keep the next object's out of their line.
///
/// Not copyable, so that it is only ever stored in place (and a test can find it where it lies).
struct CacheLinePadding: ~Copyable, Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}
