import Foundation
import SystemSupport
import RunLoop
import ServiceManager
import VitrineCore

/// Carries out a catalog's schedule on a running engine: the playlist the schedule picks (switched
/// at the item boundary, or at once with `switch: immediate`), the display's power, interrupts, and
/// the clock's edges and steps.
///
/// The schedule clock is `CLOCK_REALTIME` (a wall-clock timer with cancel-on-set wakes the loop at
/// each edge and at each step of the clock), or `--clock`'s virtual clock, which starts at the given
/// time with the first vblank and runs with the output's vblank clock (headless recordings are then
/// exact and repeatable). Either is read after each vblank: a change is applied when the next vblank
/// is at or after its edge, so the first picture of the new playlist (or the black one) is presented
/// on the first vblank at or after the edge when its decoder is ready.
///
/// Confined to the run loop's thread.
final class ScheduledPlayback {
    typealias Reason = ScheduleDirector.Reason

    private(set) var director: ScheduleDirector
    private unowned let engine: PlaybackEngine
    private let log: Logger
    private let notifier = ServiceNotifier()
    /// Called with `true` (on) or `false` (standby) when the display's power changes (HDMI-CEC).
    var onPowerChange: ((Bool) -> Void)?
    /// What plays now, for `jump` and the loop's refill.
    private(set) var playlist: [PlaylistItem] = []
    private var loops: Bool { director.manifest.loop }
    private let period: Double
    private var clock: ScheduleClock
    private var loop: EventLoop?
    private var edgeTimer: LoopTimer?
    private var stepWatch: LoopSubscription?
    /// A wall-clock timer or a step asked for an evaluation: done after the next vblank.
    private var pendingReason: Reason?

    /// - Parameters:
    ///   - virtualClockStart: `--clock`'s time (UTC seconds since 1970); nil for `CLOCK_REALTIME`.
    init(director: ScheduleDirector, engine: PlaybackEngine, virtualClockStart: Double?, log: Logger) {
        self.director = director
        self.engine = engine
        self.log = log
        period = engine.period
        clock = ScheduleClock(virtualStart: virtualClockStart)
    }

    /// The schedule clock's time now (UTC seconds), at the vblank last prepared.
    var now: Double { clock.now(hostTime: engine.lastHostTime, loop: loop) }

    /// Evaluates the schedule at the start of the run (or of a new catalog, `reason` `.catalog`),
    /// queues what it says and, when the display is scheduled off, turns it off; arms the edge timer
    /// and the clock-step watch on `loop`. Returns the items queued (empty with the display off).
    @discardableResult
    func start(on loop: EventLoop, reason: Reason = .start, immediate: Bool = false) -> [PlaylistItem] {
        self.loop = loop
        if stepWatch == nil, clock.virtualStart == nil {
            stepWatch = loop.onWallClockChange { [unowned self] in
                pendingReason = director.clockUnset ? .clockSet : .clockStep
                engine.presenter.wake()
            }
        }
        let t = now
        let out = director.evaluate(at: Self.seconds(t))
        if director.clockUnset {
            let made = director.setAfter.map { Self.iso(Double($0 + ScheduleDirector.unsetMargin)) } ?? "?"
            log.warning("the clock is not set (it reads \(Self.iso(t)), over a year before the catalog's manifest was written, "
                        + "\(made)): playing the default playlist with the display on until it is")
            _ = notifier.status("clock not set: playing the default playlist")
        }
        if director.isActive {
            log.info("schedule in \(director.zone.identifier): \(describe(director.selection)), display \(director.powerOn ? "on" : "off")"
                     + (director.nextEdge.map { ", next edge \(Self.iso(Double($0)))" } ?? ""))
            engine.events.post(.scheduleChanged(entry: director.selection.entryID, playlist: director.selection.playlist,
                                                reason: (out.clockUnset == true ? Reason.clockUnset : reason).rawValue, wallClock: t))
        }
        let items = director.items(of: director.selection)
        switchTo(items, immediate: immediate, enqueueOnly: reason == .start)
        if director.powerOn == engine.displayIsOff { setPower(director.powerOn, reason: reason, at: t) }
        armEdgeTimer()
        return director.powerOn ? items : []
    }

    /// Moves to another catalog's schedule (a finished import): evaluated at once, its playlist
    /// queued after the item on screen (or at once when `immediate`).
    func adopt(_ next: ScheduleDirector, immediate: Bool) {
        director = next
        guard let loop else { return }
        start(on: loop, reason: .catalog, immediate: immediate)
    }

    /// Cancels the timers (the run ends).
    func stop() {
        edgeTimer?.cancel()
        stepWatch?.cancel()
        edgeTimer = nil
        stepWatch = nil
    }

    /// After each vblank, on the run loop: the interrupt's timeout, then the schedule when an edge
    /// falls at or before the next vblank, or the clock stepped.
    func afterVblank() {
        if let i = director.interrupt, engine.lastHostTime + period / 2 >= i.until {
            endInterrupt(reason: "timeout")
        }
        let t = now
        // Nothing to do on most vblanks: no edge within the warm-up, no clock step.
        let near = director.nextEdge.map { t + Self.warmUp >= Double($0) } ?? false
        guard near || pendingReason != nil else { return }
        if let edge = director.nextEdge, near, warmedEdge != edge {
            warmedEdge = edge
            warm(for: edge)
        }
        // The next vblank, and the sound already handed to the device: what starts now is seen and
        // heard after both, so an edge is taken that much early.
        let lead = period + engine.audioLead
        let due = director.nextEdge.map { t + lead >= Double($0) } ?? false
        guard due || pendingReason != nil else { return }
        let reason = pendingReason ?? .edge
        pendingReason = nil
        evaluate(at: t, lead: lead, reason: reason)
    }

    /// Seconds before an edge at which the first item it brings is opened and decoding (`warm`).
    static let warmUp = 1.0
    private var warmedEdge: Int64?

    /// Opens the first item that the edge at `edge` starts at once (an immediate switch, or the
    /// display coming on), so it is on screen on the edge's vblank rather than when its decoder is.
    private func warm(for edge: Int64) {
        guard director.interrupt == nil else { return }
        let next = director.preview(at: edge)
        let switching = next.selection.entries != director.selection.entries && next.selection.immediate
        let poweringOn = next.powerOn && !director.powerOn
        guard next.powerOn, switching || poweringOn, let first = director.items(of: next.selection).first else { return }
        engine.warm(first)
    }

    /// Evaluates at `t` + `lead` and applies what changed (not during an interrupt: its end does).
    private func evaluate(at t: Double, lead: Double? = nil, reason: Reason) {
        // An edge is taken a period (and the sound device's lead) early at most: the picture it brings
        // is on the first vblank after it.
        let edge = director.nextEdge
        let out = director.evaluate(at: Self.seconds(t + (lead ?? period)))
        armEdgeTimer()
        if out.clockUnset == false {
            log.info("the clock is set (\(Self.iso(t))): the schedule applies")
            _ = notifier.status(director.powerOn ? "playing" : "off by schedule")
        }
        guard director.interrupt == nil else {
            if !out.isEmpty { log.info("schedule edge during an interrupt: applied when it ends") }
            return
        }
        let why: Reason = out.clockUnset == false ? .clockSet : (out.clockUnset == true ? .clockUnset : reason)
        // An edge is reported at its own time (the change is on screen from the vblank at it), not at
        // the vblank before, where it was decided.
        let at = why == .edge ? max(t, Double(edge ?? Self.seconds(t))) : t
        if let s = out.selection { apply(s, reason: why, at: at) }
        if let on = out.power {
            setPower(on, reason: why, at: at)
        }
    }

    /// Switches to `selection`'s playlist (while the display is off, only remembered).
    private func apply(_ selection: ScheduleDirector.Selection, reason: Reason, at t: Double) {
        log.info("schedule (\(reason.rawValue), \(Self.iso(t))): \(describe(selection))"
                 + (selection.immediate ? ", at once" : ", from the next item boundary"))
        engine.events.post(.scheduleChanged(entry: selection.entryID, playlist: selection.playlist, reason: reason.rawValue, wallClock: t))
        switchTo(director.items(of: selection), immediate: selection.immediate)
    }

    /// Plays `items` from the next item boundary, or at once; with the display off they wait for it.
    private func switchTo(_ items: [PlaylistItem], immediate: Bool, enqueueOnly: Bool = false) {
        guard !items.isEmpty else { return }
        playlist = items
        engine.refill = loops ? { [unowned self] in self.playlist } : nil
        if enqueueOnly { return }
        guard !engine.displayIsOff else { return }
        engine.clearQueue()
        if immediate || engine.playbackState == .stopped {
            engine.play(items[0])
            for item in items.dropFirst() { engine.enqueue(item) }
        } else {
            for item in items { engine.enqueue(item) }
        }
        engine.presenter.wake()
    }

    /// Turns the display off (playback stops, the screen goes black, then the CRTC off) or on
    /// (playback of what the schedule says now, from its first item).
    private func setPower(_ on: Bool, reason: Reason, at t: Double) {
        guard on == engine.displayIsOff else { return }
        log.info("display \(on ? "on" : "off") by schedule (\(reason.rawValue), \(Self.iso(t)))"
                 + (director.nextEdge.map { "; next edge \(Self.iso(Double($0)))" } ?? ""))
        engine.events.post(.displayPower(on: on, reason: reason.rawValue, wallClock: t))
        _ = notifier.status(on ? "playing" : "off by schedule")
        engine.setDisplayOff(!on)
        onPowerChange?(on)
        if on { switchTo(director.items(of: director.selection), immediate: true) }
    }

    /// Arms the wall-clock timer a period before the next edge (`CLOCK_REALTIME`, cancel-on-set), or
    /// on a virtual clock the monotonic time the edge falls at.
    private func armEdgeTimer() {
        edgeTimer?.cancel()
        edgeTimer = nil
        guard let loop, let edge = director.nextEdge else { return }
        let wake = { [unowned self] in
            if pendingReason == nil { pendingReason = .edge }
            engine.presenter.wake()
        }
        if clock.virtualStart == nil {
            let ns = (Double(edge) - period) * 1e9
            edgeTimer = loop.scheduleTimer(atWallClock: WallClockTime(nanosecondsSinceEpoch: Int64(ns)), wake)
        } else if let host = clock.hostTime(of: Double(edge) - period) {
            edgeTimer = loop.scheduleTimer(at: Deadline(seconds: host), wake)
        }
    }

    // MARK: - Interrupts

    /// Starts an announcement now: its playlist (cut in, looping) or its popup, over every
    /// schedule entry, until its timeout or `endInterrupt`. The popups on screen are hidden; a
    /// display off by schedule comes on for it.
    func startInterrupt(_ action: InterruptAction, source: String) {
        let t = now
        if let running = director.interrupt, case .overlay(let id) = running.action.content {
            engine.overlays?.presenter.hide(id, reason: .action, at: engine.lastHostTime, animated: false)
        }
        director.startInterrupt(action, hostTime: engine.lastHostTime, cutting: engine.nowPlaying)
        engine.hideAllPopups()
        if engine.displayIsOff {
            engine.setDisplayOff(false)
            onPowerChange?(true)
            engine.events.post(.displayPower(on: true, reason: Reason.interrupt.rawValue, wallClock: t))
        }
        switch action.content {
        case .playlist(let p):
            switchTo(director.manifest.items(ofPlaylist: p) ?? [], immediate: true)
            log.info("\(source): interrupt: playlist \(p) for \(action.timeout.formatted2) s")
            engine.events.post(.scheduleChanged(entry: nil, playlist: p, reason: Reason.interrupt.rawValue, wallClock: t))
        case .overlay(let id):
            if engine.playbackState == .stopped { switchTo(director.items(of: director.selection), immediate: true) }
            if engine.overlays?.presenter.show(id, at: engine.lastHostTime) != true {
                log.error("\(source): interrupt: no popup \(id) in this catalog")
            }
            log.info("\(source): interrupt: popup \(id) for \(action.timeout.formatted2) s")
            engine.events.post(.scheduleChanged(entry: director.selection.entryID, playlist: director.selection.playlist,
                                                reason: Reason.interrupt.rawValue, wallClock: t, overlay: id))
        }
        engine.presenter.wake()
    }

    /// Ends the interrupt in progress (its timeout, or `endInterrupt`): back to what the schedule
    /// says now. The item it cut plays again from its start when the schedule has not changed
    /// meanwhile; otherwise the new selection plays from its first item.
    func endInterrupt(reason: String) {
        guard let i = director.endInterrupt() else { return }
        let t = now
        if case .overlay(let id) = i.action.content {
            engine.overlays?.presenter.hide(id, reason: .action, at: engine.lastHostTime)
        }
        _ = director.evaluate(at: Self.seconds(t + period))
        armEdgeTimer()
        log.info("interrupt ended (\(reason)): \(describe(director.selection))")
        engine.events.post(.scheduleChanged(entry: director.selection.entryID, playlist: director.selection.playlist,
                                            reason: Reason.interruptEnded.rawValue, wallClock: t))
        var items = director.items(of: director.selection)
        if case .playlist = i.action.content {
            if i.interrupted.entries == director.selection.entries, let item = i.item, let k = items.firstIndex(of: item) {
                items = Array(items[k...] + items[..<k])
            }
            switchTo(items, immediate: true)
        } else if i.interrupted.entries != director.selection.entries {
            switchTo(items, immediate: director.selection.immediate)
        }
        if !director.powerOn { setPower(false, reason: .interruptEnded, at: t) }
    }

    // MARK: - Formatting

    private func describe(_ s: ScheduleDirector.Selection) -> String {
        s.entries.isEmpty ? "the default playlist" : "playlist \(s.playlist) (entry \(s.entryID ?? "?"))"
            + (s.entries.count > 1 ? ", taking turns" : "")
    }

    /// Whole seconds (the schedule's resolution), rounded down.
    static func seconds(_ t: Double) -> Int64 { Int64(t.rounded(.down)) }

    /// `2026-12-07T10:00:00.000Z`, as the event log writes times.
    static func iso(_ t: Double) -> String { EventLog.iso(t) }
}

extension Manifest {
    /// The manifest with every item's `src` (in `playlist` and `playlists`) made absolute in `directory`.
    func withAbsolutePaths(in directory: String) -> Manifest {
        func absolute(_ items: [PlaylistItem]) -> [PlaylistItem] {
            items.map { item in
                var i = item
                if !i.src.hasPrefix("/") { i.src = (directory as NSString).appendingPathComponent(i.src) }
                return i
            }
        }
        var m = self
        m.playlist = absolute(m.playlist)
        m.playlists = m.playlists.mapValues(absolute)
        return m
    }
}

/// The schedule's clock: `CLOCK_REALTIME`, or a virtual clock that starts at `virtualStart` (UTC
/// seconds) with the first vblank read and runs with the output's vblank clock (`CLOCK_MONOTONIC`
/// seconds of presentation; virtual on the headless output).
struct ScheduleClock {
    let virtualStart: Double?
    /// The vblank time the virtual clock started at.
    private(set) var origin: Double?

    init(virtualStart: Double?) { self.virtualStart = virtualStart }

    /// UTC seconds at the vblank at `hostTime`.
    mutating func now(hostTime: Double, loop: EventLoop?) -> Double {
        guard let start = virtualStart else {
            let ns = loop?.wallClockNow.nanosecondsSinceEpoch ?? WallClock.nanosecondsSinceEpoch()
            return Double(ns) / 1e9
        }
        guard hostTime > 0 else { return start }
        if origin == nil { origin = hostTime }
        return start + (hostTime - origin!)
    }

    /// On a virtual clock, the vblank time at which it reads `t`; nil before it started, or on the real clock.
    func hostTime(of t: Double) -> Double? {
        guard let start = virtualStart, let origin else { return nil }
        return origin + (t - start)
    }
}
