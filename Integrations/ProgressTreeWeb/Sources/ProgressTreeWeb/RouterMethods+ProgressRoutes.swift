import Hummingbird
import ProgressTree

extension RouterMethods {
    /// Serves `root`'s tree at this router's or group's path (see `ProgressWebRoutes` for the routes):
    /// `router.group("progress").addProgressRoutes(for: job)` serves the page at `/progress/`, its stream at
    /// `/progress/events`, behind the group's middleware. Nothing is added at the application's `/` unless
    /// this is called on the router itself. Call `finish()` on the result when the tree is no longer
    /// served, so that its walks stop and its readers' streams end.
    ///
    /// - Precondition: every entry of `options.allowedOrigins` is an origin (`ProgressWebRoutes.Options`).
    @discardableResult
    public func addProgressRoutes(
        for root: ProgressNode, options: ProgressWebRoutes.Options = ProgressWebRoutes.Options()
    ) -> ProgressWebRoutes {
        let routes = ProgressWebRoutes(root, options: options)
        addProgressRoutes(routes)
        return routes
    }

    /// Serves `routes`' tree at this router's or group's path (see `ProgressWebRoutes` for the routes).
    public func addProgressRoutes(_ routes: ProgressWebRoutes) {
        addProgressRoutes { _, _ in routes }
    }

    /// Serves, for each request, the tree `lookup` finds for it, at this group's path: one tree per job,
    /// with the job in the path. `nil` answers `404 Not Found`; what `lookup` throws is answered as
    /// Hummingbird answers a handler's error (an `HTTPError`'s status).
    ///
    /// ```swift
    /// router.group("progress/jobs/{id}").addProgressRoutes { _, context in
    ///     context.parameters.get("id", as: Int.self).flatMap { jobs.routes(of: $0) }
    /// }
    /// ```
    public func addProgressRoutes(
        lookup: @escaping @Sendable (Request, Context) async throws -> ProgressWebRoutes?
    ) {
        typealias Answer = @Sendable (ProgressWebRoutes, Request) async -> Response
        func serve(_ answer: @escaping Answer) -> @Sendable (Request, Context) async throws -> Response {
            { request, context in
                guard let routes = try await lookup(request, context) else {
                    return ProgressWebRoutes.status(.notFound)
                }
                return await answer(routes, request)
            }
        }
        get("", use: serve { routes, request in routes.pageAnswer(request) })
        get(
            "dashboard.js",
            use: serve { routes, _ in
                routes.file(PackageResources.dashboard_js, type: "text/javascript; charset=utf-8")
            })
        get(
            "dashboard.css",
            use: serve { routes, _ in
                routes.file(PackageResources.dashboard_css, type: "text/css; charset=utf-8")
            })
        get("events", use: serve { routes, request in routes.eventsAnswer(request) })
        get("token", use: serve { routes, request in routes.tokenAnswer(request) })
        post("token", use: serve { routes, request in routes.tokenAnswer(request) })
        post("commands", use: serve { routes, request in await routes.commandAnswer(request) })
    }
}
