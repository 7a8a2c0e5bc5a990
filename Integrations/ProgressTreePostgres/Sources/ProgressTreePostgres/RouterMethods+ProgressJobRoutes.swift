import Hummingbird
import ProgressTreeWeb

extension RouterMethods {
    /// Serves, at this group's path, the job whose id `jobID` finds in the request, from `store`
    /// (`ProgressJobStore.routes(forJob:)`): the page, its event stream, its token and its commands, on any
    /// instance, whichever process runs the job. A job not kept answers `404`; while PostgreSQL cannot be
    /// reached, `503`.
    ///
    /// ```swift
    /// router.group("jobs/{id}").addProgressRoutes(store: store) { _, context in context.parameters.get("id") }
    /// ```
    public func addProgressRoutes(
        store: ProgressJobStore, jobID: @escaping @Sendable (Request, Context) throws -> String?
    ) {
        addProgressRoutes { request, context in
            guard let id = try jobID(request, context) else { return nil }
            return try await store.routes(forJob: id)
        }
    }
}
