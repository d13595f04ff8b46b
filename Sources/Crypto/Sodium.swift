// libsodium's one-time initialisation, and the module's error type.
internal import CSodium

/// A libsodium call that failed. Only `sodium_init` can fail in practice (it returns -1 when the
/// library cannot initialise, e.g. without a source of randomness); the other calls this module
/// makes cannot fail on valid arguments.
public struct SodiumError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function that failed, e.g. `"sodium_init"`.
    public var operation: String
    public init(operation: String) { self.operation = operation }
    public var description: String { "\(operation) failed" }
}

/// Runs `sodium_init()` once per process. libsodium's own functions are thread-safe after it.
enum Sodium {
    /// Whether `sodium_init` succeeded (0: initialised now, 1: already initialised).
    static let ready: Bool = sodium_init() >= 0

    /// Stops the program if libsodium could not initialise: nothing in this module can run then.
    static func require() {
        precondition(ready, "sodium_init() failed: libsodium cannot be used")
    }
}
