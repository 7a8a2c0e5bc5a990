import Foundation

/// The system calls file-copy needs that Swift does not import from the C library (glibc declares them for
/// `_GNU_SOURCE` only), looked up once by name.
enum SystemCalls {
    #if os(Linux)
    private typealias CopyFileRange =
        @convention(c) (
            Int32, UnsafeMutablePointer<Int64>?, Int32, UnsafeMutablePointer<Int64>?, Int, UInt32
        ) -> Int
    private typealias RenameAt2 =
        @convention(c) (
            Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32
        ) -> Int32

    /// `dlsym(RTLD_DEFAULT, name)`: the C library this process already uses.
    private static func function(named name: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
    }

    private static let copyFileRangeFunction = function(named: "copy_file_range").map {
        unsafeBitCast($0, to: CopyFileRange.self)
    }
    private static let renameAt2Function = function(named: "renameat2").map { unsafeBitCast($0, to: RenameAt2.self) }
    /// `RENAME_NOREPLACE` of `<linux/fs.h>`.
    private static let renameNoReplace: UInt32 = 1
    #endif

    /// Copies up to `length` bytes from `input` to `output` inside the kernel (`copy_file_range(2)`: no
    /// copy through this process, and a clone where the file system can share blocks), at and advancing
    /// `inputOffset` and `outputOffset` when given, else at and advancing each file's position. Returns
    /// the bytes copied (0 at the end of the input), or -1 with `errno`: `ENOSYS` where the call does not
    /// exist, and `EXDEV`, `EINVAL` or `EOPNOTSUPP` where these two files cannot use it (then copy with
    /// `read` and `write`).
    static func copyFileRange(
        from input: Int32, at inputOffset: UnsafeMutablePointer<Int64>?, to output: Int32,
        at outputOffset: UnsafeMutablePointer<Int64>?, length: Int
    ) -> Int {
        #if os(Linux)
        if let copyFileRangeFunction {
            return copyFileRangeFunction(input, inputOffset, output, outputOffset, length, 0)
        }
        #endif
        errno = ENOSYS
        return -1
    }

    /// Whether an error of `copyFileRange` means "not for these files": copy them another way.
    static func copyFileRangeIsUnsupported(_ code: Int32) -> Bool {
        code == ENOSYS || code == EXDEV || code == EINVAL || code == EOPNOTSUPP || code == EPERM || code == EBADF
    }

    /// Renames `name` to `newName` in the folder open on `folder`, failing with `EEXIST` rather than replacing
    /// an entry of that name, in one step (`renameat2` with `RENAME_NOREPLACE`; `renameatx_np` with
    /// `RENAME_EXCL` on Apple's systems). Where the file system cannot, a hard link under the new name and
    /// the removal of the old one do the same in two. Returns 0, or -1 with `errno`.
    static func renameWithoutReplacing(_ name: String, to newName: String, in folder: Int32) -> Int32 {
        #if os(Linux)
        if let renameAt2Function {
            let result = renameAt2Function(folder, name, folder, newName, renameNoReplace)
            if result == 0 || (errno != ENOSYS && errno != EINVAL) { return result }
        }
        #else
        let result = renameatx_np(folder, name, folder, newName, UInt32(RENAME_EXCL))
        if result == 0 || (errno != ENOTSUP && errno != EINVAL) { return result }
        #endif
        guard linkat(folder, name, folder, newName, 0) == 0 else { return -1 }
        return unlinkat(folder, name, 0)
    }
}
