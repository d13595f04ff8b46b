import Foundation
import VitrineCore

/// The schedule's side of a run: which playlist plays (`schedule`, `playlists`) and whether the
/// display is on (`display.power`) at the schedule clock's time, when that changes next, and the
/// interrupt that pre-empts both.
///
/// Pure bookkeeping: it reads no clock and drives nothing. The player gives it the time (seconds
/// since 1970 UTC, from `CLOCK_REALTIME` or `--clock`'s virtual clock) and carries out what it
/// returns. Times of day are evaluated in `zone` (system tzdata, `ZoneRules`).
///
/// Rules (README "Schedules and display power"): the highest-priority eligible entry plays, entries
/// of equal priority take turns item by item (`interleave`), nothing eligible plays the default
/// playlist. A clock that reads more than a year before the catalog was made is taken as unset: the default
/// playlist plays with the display on until the clock is set. While an interrupt runs, edges are
/// noted but not applied; its end applies what the schedule says then.
final class ScheduleDirector {
    /// Why the schedule was evaluated (the `reason` of `scheduleChanged` and `displayPower`).
    enum Reason: String, Sendable {
        case start, edge
        case clockStep = "clock step", clockSet = "clock set", clockUnset = "clock unset"
        case catalog = "import"
        case interrupt
        case interruptEnded = "interrupt ended"
    }

    /// What plays: the schedule entries chosen (indices into `schedule.entries`; empty for the
    /// default playlist) and how to switch to it.
    struct Selection: Equatable, Sendable {
        var entries: [Int]
        /// `"default"`, a playlist name, or the names taking turns joined by `+`.
        var playlist: String
        /// The entry's `id` (ids joined by `+` when several take turns); nil for the default playlist.
        var entryID: String?
        /// `switch: immediate` on any chosen entry: cut the item on screen.
        var immediate: Bool

        static let defaultPlaylist = Selection(entries: [], playlist: "default", entryID: nil, immediate: false)
    }

    /// An announcement in progress (`interrupt` action).
    struct Interrupt: Sendable {
        var action: InterruptAction
        /// `CLOCK_MONOTONIC` seconds (the output's vblank clock) when it ends by itself.
        var until: Double
        /// What it interrupted: the selection then, and the item on screen (played again from its
        /// start when it ends, if the selection is the same).
        var interrupted: Selection
        var item: PlaylistItem?
    }

    let manifest: Manifest
    let zone: ZoneRules
    /// A clock that reads more than this before the catalog was made is unset (seconds: 366 days).
    /// A year, so that a manifest saved on a PC whose clock runs a little ahead never turns the
    /// schedule off, while a box that boots at 1970 or at its build date is caught.
    static let unsetMargin: Int64 = 366 * 86400

    /// The first instant the clock counts as set: `unsetMargin` before the catalog was made (UTC
    /// seconds); nil when that is not known.
    let setAfter: Int64?
    private(set) var selection = Selection.defaultPlaylist
    private(set) var powerOn = true
    /// The clock reads before `setAfter`.
    private(set) var clockUnset = false
    private(set) var interrupt: Interrupt?
    /// The next instant (UTC seconds) at which the selection or the power may change; nil for none
    /// within the schedule's horizon, or while the clock is unset.
    private(set) var nextEdge: Int64?

    /// - Parameters:
    ///   - madeAt: when the catalog was made (UTC seconds): its manifest file's modification time.
    init(manifest: Manifest, zone: ZoneRules, madeAt: Int64?) {
        self.manifest = manifest
        self.zone = zone
        setAfter = madeAt.map { $0 - Self.unsetMargin }
    }

    /// Whether the catalog has anything for this type to do (a schedule or a power grid); without
    /// them the default playlist plays with the display on, as before schedules existed.
    var isActive: Bool { manifest.schedule?.entries.isEmpty == false || manifest.display.power != nil }

    /// What changed in an evaluation.
    struct Outcome: Equatable {
        var selection: Selection?
        var power: Bool?
        /// The clock became unset (true) or set (false).
        var clockUnset: Bool?
        var isEmpty: Bool { selection == nil && power == nil && clockUnset == nil }
    }

    /// Evaluates the schedule at `now` (UTC seconds) and returns what changed since the last call
    /// (everything, on the first). During an interrupt the new state is kept, and reported when it ends.
    func evaluate(at now: Int64) -> Outcome {
        var out = Outcome()
        let unset = setAfter.map { now < $0 } ?? false
        if unset != clockUnset { out.clockUnset = unset }
        clockUnset = unset
        let newSelection: Selection
        let newPower: Bool
        if unset {
            newSelection = .defaultPlaylist
            newPower = true
            nextEdge = nil
        } else {
            newSelection = select(at: now)
            newPower = manifest.display.power?.isOn(atUTC: now, zone: zone) ?? true
            let edges = [manifest.schedule?.nextEdge(afterUTC: now, zone: zone),
                         manifest.display.power?.nextEdge(afterUTC: now, zone: zone)].compactMap { $0 }
            nextEdge = edges.min()
        }
        if newSelection.entries != selection.entries { out.selection = newSelection }
        if newPower != powerOn { out.power = newPower }
        selection = newSelection
        powerOn = newPower
        return out
    }

    /// What would play at `t` (UTC seconds), without moving to it; the current selection while the
    /// clock is unset.
    func preview(at t: Int64) -> (selection: Selection, powerOn: Bool) {
        guard !clockUnset else { return (selection, powerOn) }
        return (select(at: t), manifest.display.power?.isOn(atUTC: t, zone: zone) ?? true)
    }

    /// The entries that play at `now`.
    private func select(at now: Int64) -> Selection {
        guard let schedule = manifest.schedule, !schedule.entries.isEmpty else { return .defaultPlaylist }
        let chosen = schedule.selection(atUTC: now, zone: zone)
        guard !chosen.isEmpty else {
            var s = Selection.defaultPlaylist
            s.immediate = schedule.switchMode(from: selection.entries, to: []) == .immediate
            return s
        }
        let entries = chosen.map { schedule.entries[$0] }
        return Selection(entries: chosen, playlist: entries.map(\.playlist).joined(separator: "+"),
                         entryID: entries.map(\.id).joined(separator: "+"),
                         immediate: schedule.switchMode(from: selection.entries, to: chosen) == .immediate)
    }

    /// The items of `selection`: its playlist, or its playlists taking turns item by item.
    func items(of selection: Selection) -> [PlaylistItem] {
        manifest.items(forSelection: selection.entries)
    }

    // MARK: - Interrupts

    /// Starts `action` at `hostTime` (`CLOCK_MONOTONIC` seconds), cutting `item`; it ends by itself
    /// after its timeout. Replaces an interrupt in progress, and returns to what that one interrupted.
    func startInterrupt(_ action: InterruptAction, hostTime: Double, cutting item: PlaylistItem?) {
        interrupt = Interrupt(action: action, until: hostTime + action.timeout,
                              interrupted: interrupt?.interrupted ?? selection, item: interrupt.map { $0.item } ?? item)
    }

    /// Ends the interrupt; returns it (nil when none was running).
    @discardableResult
    func endInterrupt() -> Interrupt? {
        defer { interrupt = nil }
        return interrupt
    }
}
