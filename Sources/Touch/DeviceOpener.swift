// How libinput opens /dev/input/event* nodes: the `open_restricted` / `close_restricted` callbacks
// (`struct libinput_interface`). We run as a user in the `input` group (or root), with no logind
// session to hand out descriptors, so the callbacks call open(2) and close(2) directly.
internal import CInput
internal import Glibc

/// The user data behind a context's `libinput_interface`: remembers why the last open failed, so an
/// `InputError` can say `ENOENT` or `EACCES` where libinput only returns `NULL`.
///
/// Owned by its `InputContext`, which destroys the libinput context before releasing it.
/// Used on the context's thread only, from inside libinput calls.
final class DeviceOpener {
    /// The positive `errno` of the last failed open, with the path; `nil` after a successful one.
    var lastFailure: (path: String, code: Int32)?

    /// The `user_data` pointer libinput hands back to the callbacks. Unretained: the context keeps
    /// the opener alive for as long as the libinput context lives.
    var userData: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The callbacks, allocated once and never freed: libinput keeps the pointer, not a copy.
    nonisolated(unsafe) static let interface: UnsafePointer<libinput_interface> = {
        let pointer = UnsafeMutablePointer<libinput_interface>.allocate(capacity: 1)
        pointer.initialize(to: libinput_interface(
            open_restricted: { path, flags, userData in DeviceOpener.open(path, flags, userData) },
            close_restricted: { fd, _ in _ = Glibc.close(fd) }))
        return UnsafePointer(pointer)
    }()

    /// Opens a device node for libinput: its `flags` (normally `O_RDWR`) plus `O_NONBLOCK` and
    /// `O_CLOEXEC`, retrying on `EINTR`.
    ///
    /// - Returns: the descriptor, or `-errno` on failure (what libinput expects).
    ///
    /// The corresponding C function is `open`.
    private static func open(_ path: UnsafePointer<CChar>?, _ flags: Int32, _ userData: UnsafeMutableRawPointer?) -> Int32 {
        guard let path else { return -EINVAL }
        let opener = userData.map { Unmanaged<DeviceOpener>.fromOpaque($0).takeUnretainedValue() }
        do throws(InputError) {
            let fd = try InputCall.check("open", subject: String(cString: path)) {
                Glibc.open(path, flags | O_NONBLOCK | O_CLOEXEC)
            }
            opener?.lastFailure = nil
            return fd
        } catch {
            opener?.lastFailure = (String(cString: path), error.code)
            return -error.code
        }
    }
}
