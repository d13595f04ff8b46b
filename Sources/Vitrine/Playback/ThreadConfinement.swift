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

/// A stored property confined to the thread that made it: every read and write is checked in debug
/// builds (`ThreadConfinement`).
@propertyWrapper
struct Confined<Value> {
    private let confinement = ThreadConfinement()
    private var value: Value

    init(wrappedValue: Value) { value = wrappedValue }

    var wrappedValue: Value {
        get { confinement.check(); return value }
        set { confinement.check(); value = newValue }
    }
}
