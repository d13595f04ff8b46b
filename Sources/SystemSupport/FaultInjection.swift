// The one fault-injection seam of the bindings: a test makes a C call fail (or return less) as
// the kernel or the library would, without touching the code above the binding.
import Synchronization

/// One C call, as the gateway, the fault seam and error messages name it.
public struct SystemCall: Sendable, Hashable, CustomStringConvertible {
    /// The C function: `"read"`, `"fsync"`, `"rename"`, `"drmModeAtomicCommit"`, `"snd_pcm_writei"`,
    /// `"libinput_dispatch"`.
    public var function: String
    /// What the call is about: a path, a device node, a PCM name, or the binding's summary of its
    /// arguments (`"TEST_ONLY, ALLOW_MODESET"`); nil when there is nothing to say.
    public var subject: String?
    /// The second path of a two-path call: the new name of `rename`, the target text of `symlink`.
    public var target: String?

    public init(_ function: String, _ subject: String? = nil, target: String? = nil) {
        self.function = function
        self.subject = subject
        self.target = target
    }

    /// `rename /lib/.current.tmp → /lib/current`, `drmModeGetConnector 42`, `fsync`.
    public var description: String {
        var text = function
        if let subject { text += " " + subject }
        if let target { text += " → " + target }
        return text
    }
}

/// What an injected fault does to a call. The call itself is not made.
public enum Fault: Sendable, Equatable {
    /// The call fails with this `errno` (returned as `-errno` to bindings of libraries that return
    /// negative codes, such as alsa-lib).
    case fail(Errno)
    /// The call returns `value` as if it had run: a short count for `read`, `write` or
    /// `snd_pcm_writei` (frames "taken" without being written), 0 for `poll`.
    case result(Int)
}

/// What a test injects: asked before every C call that goes through a binding's gateway.
public struct FaultPlan: Sendable {
    /// The fault for `call`, or nil to let it run. Called on whichever thread makes the call.
    public var fault: @Sendable (SystemCall) -> Fault?
    /// Replaces the free space `statvfs` reports (`f_bavail × f_frsize`), in bytes.
    public var availableSpace: Int64?

    public init(availableSpace: Int64? = nil, fault: @escaping @Sendable (SystemCall) -> Fault? = { _ in nil }) {
        self.fault = fault
        self.availableSpace = availableSpace
    }

    /// The next calls of `function` get `faults`, one each, in order; every other call runs.
    public static func sequence(_ function: String, _ faults: [Fault]) -> FaultPlan {
        let queue = Mutex(faults[...])
        return FaultPlan { call in
            guard call.function == function else { return nil }
            return queue.withLock { $0.popFirst() }
        }
    }
}

/// Where the plan of the running test lives, and how it follows work onto other threads.
///
/// The plan is task-local (as the Touch module's hook was), so tests running in parallel never see
/// each other's faults. Outside a task it is bound to the calling thread. A thread started by a
/// binding's user does not inherit it: wrap the thread's body in `propagating(_:)`.
///
/// The seam exists in debug builds only (`#if DEBUG`, as swift-system's mock driver is compiled
/// only with `ENABLE_MOCKING`); release builds make every call directly.
public enum FaultInjection {
    #if DEBUG
    @TaskLocal static var plan: FaultPlan?

    /// Runs `body` with `plan` asked before every C call made through a gateway, on this thread,
    /// in child tasks, and on threads whose body went through `propagating(_:)`.
    public static func withPlan<R>(_ plan: FaultPlan, _ body: () throws -> R) rethrows -> R {
        try $plan.withValue(plan, operation: body)
    }

    /// The plan in force here, if any.
    public static var current: FaultPlan? { plan }

    /// The injected fault for `call`, if a plan is in force and says so.
    package static func fault(for call: @autoclosure () -> SystemCall) -> Fault? {
        guard let plan else { return nil }
        return plan.fault(call())
    }
    #endif

    /// `body`, made to run with the caller's plan on the thread it is handed to (debug builds; in
    /// release builds `body` itself). Use it for every thread that does a test's work:
    /// `Thread(block: FaultInjection.propagating { … })`.
    public static func propagating(_ body: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
        #if DEBUG
        guard let plan else { return body }
        return { $plan.withValue(plan, operation: body) }
        #else
        return body
        #endif
    }
}
