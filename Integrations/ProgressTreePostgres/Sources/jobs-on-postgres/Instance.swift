import Hummingbird
import Logging
import ProgressTreePostgres
import ProgressTreeWeb

/// `jobs-on-postgres serve`: a web instance that serves every job's page from PostgreSQL.
struct Instance {
    let options: OptionList

    init(arguments: [String]) throws {
        options = try OptionList(
            arguments, known: ["--postgres", "--port", "--address", "--allowed-host", "--allowed-origin"])
    }

    func run() async throws {
        let port = try options.number("--port", default: 0, in: 0...65535)
        let address = options.last("--address") ?? "127.0.0.1"
        var storeOptions = ProgressJobStore.Options()
        storeOptions.routes.allowedHostNames = options.all("--allowed-host")
        for origin in options.all("--allowed-origin") {
            guard ProgressWebRoutes.Options.normalizedOrigin(origin) != nil else {
                throw UsageError("--allowed-origin \(origin): write scheme://host[:port]")
            }
            storeOptions.routes.allowedOrigins.append(origin)
        }
        var logger = Logger(label: "jobs-on-postgres") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .warning
        let store = try options.store(options: storeOptions)
        let router = Router()
        router.get("health") { _, _ in "ok" }
        router.group("jobs/{id}").addProgressRoutes(store: store) { _, context in context.parameters.get("id") }
        let application = Application(
            router: router, configuration: ApplicationConfiguration(address: .hostname(address, port: port)),
            services: [store],
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                say("http://\(address == "0.0.0.0" ? "127.0.0.1" : address):\(bound)/")
            }, logger: logger)
        try await application.runService()
    }
}
