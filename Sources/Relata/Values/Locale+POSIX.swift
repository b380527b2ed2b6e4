import Foundation

extension Locale {
    /// `en_US_POSIX`, made once: numbers are read and written the same whatever the host's
    /// locale, and making a `Locale` for every decimal read cost more than reading it.
    ///
    /// ```swift
    /// Decimal(string: "12.50", locale: .posix)   // 12.5, with a point in every locale
    /// ```
    static let posix = Locale(identifier: "en_US_POSIX")
}
