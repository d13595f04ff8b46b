internal import CCairo

/// An error reported by Cairo: the function that failed and its `cairo_status_t`.
public struct CanvasError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The Cairo function that failed, for example `"cairo_image_surface_create"`.
    public var operation: String
    /// The `cairo_status_t` value, for example 24 (`CAIRO_STATUS_INVALID_SIZE`).
    public var status: Int32

    public init(operation: String, status: Int32) {
        self.operation = operation
        self.status = status
    }

    init(operation: String, _ status: cairo_status_t) {
        self.init(operation: operation, status: Int32(status.rawValue))
    }

    /// `cairo_image_surface_create: invalid value (typically too big) for the size of the input (surface, pattern, etc.) (24)`.
    ///
    /// The message comes from `cairo_status_to_string`; this is the only place the module converts statuses to text.
    public var description: String {
        let message = cairo_status_to_string(cairo_status_t(rawValue: .init(truncatingIfNeeded: status))).map { String(cString: $0) }
        return "\(operation): \(message ?? "unknown status") (\(status))"
    }
}

/// Throws `CanvasError` unless `status` is `CAIRO_STATUS_SUCCESS`.
@inline(__always)
func check(_ operation: String, _ status: cairo_status_t) throws(CanvasError) {
    guard status == CAIRO_STATUS_SUCCESS else { throw CanvasError(operation: operation, status) }
}
