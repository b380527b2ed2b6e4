import NIOCore

/// Closes a connection once its client has closed its side. The server allows half-closed
/// connections, so without this a client that went away (a closed browser tab, a killed
/// script) would leave its connection open, and its request computing, until the answer is
/// written; closed, the request's ``WorkLimit`` sees the client gone and the work stops —
/// as nginx treats a client's end of input as the request's end.
final class ClientGoneHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            context.close(promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
