// One atomic request: property values collected, then committed in one of three modes.
internal import CDRM

/// How an atomic request is committed.
enum CommitMode: Sendable, CustomStringConvertible {
    /// Only check that the kernel would accept it (`DRM_MODE_ATOMIC_TEST_ONLY`); nothing changes.
    case testOnly
    /// Apply it and return once it is on screen.
    case blocking
    /// Queue it and return at once (`DRM_MODE_ATOMIC_NONBLOCK`); a page-flip event reports completion.
    case nonBlocking

    var description: String {
        switch self {
        case .testOnly: "TEST_ONLY"
        case .blocking: "blocking"
        case .nonBlocking: "NONBLOCK"
        }
    }
}

/// A `drmModeAtomicReq`, freed when the value goes away.
struct AtomicRequest: ~Copyable {
    private let request: drmModeAtomicReqPtr

    /// Allocates an empty request.
    ///
    /// - Throws: `DRMError` (`ENOMEM`) when libdrm cannot allocate it.
    /// The corresponding C function is `drmModeAtomicAlloc`.
    init() throws(DRMError) {
        request = try DRMCall.pointer("drmModeAtomicAlloc") { drmModeAtomicAlloc() }
    }

    deinit { drmModeAtomicFree(request) }

    /// Sets `property` of `object` to `value` in this request.
    ///
    /// - Throws: `DRMError` (`ENOMEM`) when the request cannot grow.
    /// The corresponding C function is `drmModeAtomicAddProperty`.
    func add(object: UInt32, property: UInt32, value: UInt64) throws(DRMError) {
        try DRMCall.check("drmModeAtomicAddProperty(\(object), \(property))") {
            drmModeAtomicAddProperty(request, object, property, value)
        }
    }

    /// Commits the request.
    ///
    /// - Parameters:
    ///   - mode: test only, blocking, or non-blocking.
    ///   - allowModeset: adds `DRM_MODE_ATOMIC_ALLOW_MODESET` (needed to change mode or routing).
    ///   - pageFlipEvent: adds `DRM_MODE_PAGE_FLIP_EVENT` (ignored in `.testOnly`); the event
    ///     carries `userData` back to the `drmEventContext` handler.
    /// - Throws: `DRMError` named `drmModeAtomicCommit(<mode>)`, e.g. `EINVAL` for a rejected
    ///   configuration, `EBUSY` when a previous non-blocking commit is still pending, `EACCES`
    ///   when this process is not DRM master.
    /// The corresponding C function is `drmModeAtomicCommit`.
    func commit(fd: Int32, mode: CommitMode, allowModeset: Bool, pageFlipEvent: Bool,
                userData: UnsafeMutableRawPointer?) throws(DRMError) {
        var flags: UInt32 = 0
        switch mode {
        case .testOnly: flags |= UInt32(DRM_MODE_ATOMIC_TEST_ONLY)
        case .blocking: break
        case .nonBlocking: flags |= UInt32(DRM_MODE_ATOMIC_NONBLOCK)
        }
        if allowModeset { flags |= UInt32(DRM_MODE_ATOMIC_ALLOW_MODESET) }
        if pageFlipEvent && mode != .testOnly { flags |= UInt32(DRM_MODE_PAGE_FLIP_EVENT) }
        try DRMCall.check("drmModeAtomicCommit(\(mode)\(allowModeset ? ", ALLOW_MODESET" : ""))") {
            drmModeAtomicCommit(fd, request, flags, mode == .testOnly ? nil : userData)
        }
    }
}
