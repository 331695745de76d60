import Hummingbird

/// Puts `DashboardServer.securityHeaders()` on every answer the router makes, the ones no route wrote (a
/// `404` for an unknown path, an error thrown by a handler) included; a route's own header (a page's
/// `Content-Security-Policy`) wins.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError {
            response = try error.response(from: request, context: context)
        }
        for field in DashboardServer.securityHeaders() where response.headers[field.name] == nil {
            response.headers.append(field)
        }
        return response
    }
}
