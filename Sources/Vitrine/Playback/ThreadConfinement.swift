import Foundation

/// The thread a run-loop-confined object belongs to (the one that made it), checked in debug builds:
/// `check()` stops the program when called from any other thread. Release builds skip the check.
struct ThreadConfinement: Sendable {
    #if DEBUG
    private let owner = ObjectIdentifier(Thread.current)
    #endif

    init() {}

    /// Stops a debug build when the caller is not on the owning thread.
    @inline(__always)
    func check(_ function: StaticString = #function) {
        #if DEBUG
        precondition(ObjectIdentifier(Thread.current) == owner, "\(function) called off the thread that owns it")
        #endif
    }
}
