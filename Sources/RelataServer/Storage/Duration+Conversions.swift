import NIOCore

extension Duration {
    /// The duration in seconds, as Foundation and Dispatch take it.
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration as NIO takes it, clamped to 0…68 years (anything longer is as good as for
    /// ever), so no duration a caller gives can overflow.
    var timeAmount: TimeAmount {
        let (seconds, attoseconds) = components
        return .nanoseconds(Int64(min(max(seconds, 0), Int64(Int32.max))) * 1_000_000_000 + max(attoseconds, 0) / 1_000_000_000)
    }
}
