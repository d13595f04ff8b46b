import Foundation
import Media
import VitrineCore

/// What the screen should show at one vblank.
indirect enum ScreenContent: Equatable {
    /// A decoded picture (identified by its object) from a source generation.
    case frame(VideoFrame, generation: Int)
    /// The background colour only (audio items, start-up).
    case background
    /// The built-in slate with its message.
    case slate(SlateMessage)
    /// Black, whatever the background colour: the display is off by schedule.
    case dark
    /// `to` drawn over by the previous screen `from` at opacity 1 − `progress` (a crossfade).
    case crossfade(from: ImageBuffer, to: ScreenContent, progress: Double)

    static func == (a: ScreenContent, b: ScreenContent) -> Bool {
        switch (a, b) {
        case let (.frame(x, g1), .frame(y, g2)): return x === y && g1 == g2
        case (.background, .background), (.dark, .dark): return true
        case let (.slate(x), .slate(y)): return x == y
        case let (.crossfade(f1, t1, p1), .crossfade(f2, t2, p2)): return f1 === f2 && t1 == t2 && p1 == p2
        default: return false
        }
    }
}

/// Turns `ScreenContent` into pixels: converts and scales the picture once into the output buffer
/// (through an intermediate canvas only when the display is rotated), honours `fit`, and paints
/// letterbox/pillarbox bars in the background colour.
///
/// On a video wall (`display.wall`, complete) every video frame and still image is first cut to this
/// screen's tile (`VideoWall.tile`), which is then placed by `fit` as if it were the whole picture:
/// the scaler reads only that part of the source planes. Crossfades blend the previous screen (its
/// tile already); the slate, the popups and the banner are this screen's own, not spread over the wall.
final class Compositor {
    let display: DisplaySettings
    /// This screen's tile of a video wall; nil shows the whole picture.
    let wall: VideoWall?
    private let scaler = Scaler()
    private var rotated: ImageBuffer?
    let slate: SlateRenderer
    private let log: Logger
    /// Source sizes whose tile the bezels leave empty, logged once each.
    private var emptyTiles = Set<[Int]>()

    init(display: DisplaySettings, log: Logger) {
        self.display = display
        self.log = log
        wall = display.wall.flatMap(VideoWall.init)
        slate = SlateRenderer(log: log)
    }

    /// Draws `content` and then `overlay` (the popups) on the logical canvas, then turns it onto the
    /// screen if the display is rotated.
    func draw(_ content: ScreenContent, into target: PixelTarget, overlay: ((PixelTarget) -> Void)? = nil) throws {
        let canvas = Layout.canvasSize(screenWidth: target.width, screenHeight: target.height, rotation: display.rotation)
        if display.rotation != .none, overlay == nil, case .frame(let frame, _) = content {
            // A picture alone on a rotated display is turned once, by its own rotation and the display's
            // together (not scaled onto the canvas and the whole canvas turned again).
            try drawFrame(frame, canvas: canvas, into: target)
            return
        }
        try withCanvas(target, canvas) { c in
            try drawLogical(content, into: c)
            overlay?(c)
        }
    }

    /// Draws `content` with popups or a banner over it. The picture under them is kept in memory
    /// (`under`, one logical canvas of XRGB8888) and converted and scaled only when `content` changes:
    /// the vblanks of a popup animation between two video frames reuse it. `overlay` receives the
    /// logical canvas and that picture, and must write every pixel of the canvas from it
    /// (`PixelTarget.copy(from:)` or `copyDimmed(from:color:alpha:)`) before drawing on top.
    func drawDecorated(_ content: ScreenContent, into target: PixelTarget,
                       overlay: (_ canvas: PixelTarget, _ under: PixelTarget) -> Void) throws {
        let canvas = Layout.canvasSize(screenWidth: target.width, screenHeight: target.height, rotation: display.rotation)
        if under == nil || under!.width != canvas.width || under!.height != canvas.height {
            under = ImageBuffer(width: canvas.width, height: canvas.height)
            underContent = nil
        }
        let picture = under!
        if underContent != content {
            try picture.withTarget { try drawLogical(content, into: $0) }
            underContent = content
        }
        try withCanvas(target, canvas) { c in
            picture.withTarget { overlay(c, $0) }
        }
    }

    /// Allocates (and touches) the picture kept for popups ahead of the first one, for a screen of
    /// `width`×`height`, so a popup's first vblank does not pay for it.
    func prepareUnderlay(screenWidth width: Int, screenHeight height: Int) {
        let canvas = Layout.canvasSize(screenWidth: width, screenHeight: height, rotation: display.rotation)
        under = ImageBuffer(width: canvas.width, height: canvas.height)
        under!.withTarget { $0.fill(PixelRect(x: 0, y: 0, width: $0.width, height: $0.height), with: 0) }
        underContent = nil
    }

    /// Forgets the picture kept for popups (none are up any more); the buffer stays for the next one.
    func releaseUnderlay() {
        underContent = nil
    }
    private var under: ImageBuffer?
    private var underContent: ScreenContent?

    /// The size of the logical canvas for a screen of `width`×`height`.
    func canvasSize(screenWidth: Int, screenHeight: Int) -> (width: Int, height: Int) {
        Layout.canvasSize(screenWidth: screenWidth, screenHeight: screenHeight, rotation: display.rotation)
    }

    /// Draws `content` onto a logical canvas (no rotation).
    func drawLogical(_ content: ScreenContent, into c: PixelTarget) throws {
        let background = display.background.xrgb8888
        switch content {
        case .background:
            c.fill(PixelRect(x: 0, y: 0, width: c.width, height: c.height), with: background)
        case .dark:
            c.fill(PixelRect(x: 0, y: 0, width: c.width, height: c.height), with: 0xFF00_0000)
        case .slate(let message):
            slate.draw(message, into: c)
        case let .crossfade(from, to, progress):
            try drawLogical(to, into: c)
            if from.width == c.width && from.height == c.height {
                from.withTarget { c.blend(premultiplied: $0, x: 0, y: 0, opacity: max(0, min(1, 1 - progress))) }
            }
        case .frame(let frame, _):
            try drawFrame(frame, canvas: (c.width, c.height), into: c, turns: 0)
        }
    }

    /// Draws `frame` placed by `fit` on a logical canvas of `canvas` size, with bars in the background
    /// colour, into `target`: the canvas itself (`turns` 0), or the screen under a display turned
    /// `turns` quarter turns clockwise. The picture as displayed is turned by its own rotation (a
    /// portrait phone clip is placed as portrait), and alpha is blended over the background.
    private func drawFrame(_ frame: VideoFrame, canvas: (width: Int, height: Int), into target: PixelTarget,
                           turns: Int? = nil) throws {
        let turns = turns ?? display.rotation.rawValue / 90
        let background = display.background.xrgb8888
        if let wall, !wall.leavesPicture(sourceWidth: frame.displayWidth, sourceHeight: frame.displayHeight) {
            // Bezels wider than the picture allows: nothing of it is this screen's.
            if emptyTiles.insert([frame.displayWidth, frame.displayHeight]).inserted {
                log.error("display.wall.bezel: \(wall.bezelX)x\(wall.bezelY) source pixels between tiles leave no picture for "
                          + "a tile of this \(frame.displayWidth)x\(frame.displayHeight) picture on a \(wall.columns)x\(wall.rows) "
                          + "wall; showing the background")
            }
            target.fill(PixelRect(x: 0, y: 0, width: target.width, height: target.height), with: background)
            return
        }
        // The part of the picture this screen shows: all of it, or its tile of the wall.
        let shown = wall?.tile(sourceWidth: frame.displayWidth, sourceHeight: frame.displayHeight)
            ?? Rect(x: 0, y: 0, width: frame.displayWidth, height: frame.displayHeight)
        let p = Layout.place(sourceWidth: shown.width, sourceHeight: shown.height,
                             sampleAspect: frame.displaySampleAspectRatio,
                             canvasWidth: canvas.width, canvasHeight: canvas.height, fit: display.fit)
        let d = p.destination
        // The destination on the target: the canvas rectangle turned with the canvas.
        let dest: PixelRect
        switch turns {
        case 1: dest = PixelRect(x: target.width - d.y - d.height, y: d.x, width: d.height, height: d.width)
        case 2: dest = PixelRect(x: target.width - d.x - d.width, y: target.height - d.y - d.height, width: d.width, height: d.height)
        case 3: dest = PixelRect(x: d.y, y: target.height - d.x - d.width, width: d.height, height: d.width)
        default: dest = PixelRect(x: d.x, y: d.y, width: d.width, height: d.height)
        }
        try scaler.scale(frame, crop: PixelRect(x: shown.x + p.crop.x, y: shown.y + p.crop.y, width: p.crop.width, height: p.crop.height),
                         into: target, rect: dest, over: background & 0x00FF_FFFF, quarterTurns: turns)
        target.fill(outside: dest, with: background)
    }

    /// Runs `body` on the logical canvas: the target itself, or a rotated intermediate copied back.
    private func withCanvas(_ target: PixelTarget, _ canvas: (width: Int, height: Int), _ body: (PixelTarget) throws -> Void) throws {
        if display.rotation == .none {
            try body(target)
            return
        }
        if rotated == nil || rotated!.width != canvas.width || rotated!.height != canvas.height {
            rotated = ImageBuffer(width: canvas.width, height: canvas.height)
        }
        try rotated!.withTarget { c in
            try body(c)
            target.copyRotated(from: c, quarterTurns: display.rotation.rawValue / 90, x: 0, y: 0)
        }
    }
}
