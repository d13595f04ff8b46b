// Picture placement: how a source picture of a given size fills the screen under `fit` and
// `rotation`. Pure maths; the engine applies the result with swscale.

/// An integer rectangle in pixels; (`x`, `y`) is the top-left corner.
public struct Rect: Sendable, Equatable, CustomStringConvertible {
    public var x: Int, y: Int, width: Int, height: Int
    public init(x: Int, y: Int, width: Int, height: Int) { self.x = x; self.y = y; self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)+\(x)+\(y)" }
}

/// Where a picture goes: the part of the source to use (`crop`, source pixels) and the rectangle of the
/// logical canvas it fills (`destination`, canvas pixels). The logical canvas is the screen, with width
/// and height swapped for 90° and 270° rotation.
public struct Placement: Sendable, Equatable {
    public var crop: Rect
    public var destination: Rect
}

public enum Layout {
    /// The logical canvas size for a screen of `width`×`height` pixels under `rotation`.
    public static func canvasSize(screenWidth: Int, screenHeight: Int, rotation: Rotation) -> (width: Int, height: Int) {
        rotation.swapsAxes ? (screenHeight, screenWidth) : (screenWidth, screenHeight)
    }

    /// Places a `sourceWidth`×`sourceHeight` picture with sample aspect ratio `sampleAspect` on a
    /// `canvasWidth`×`canvasHeight` canvas.
    /// - `contain`: the whole picture, aspect kept, centred; bars fill the rest.
    /// - `cover`: the canvas filled, aspect kept; the source is cropped equally on both sides.
    /// - `stretch`: the whole picture on the whole canvas.
    /// Sizes are rounded to even numbers so 4:2:0 chroma stays aligned.
    public static func place(sourceWidth: Int, sourceHeight: Int, sampleAspect: Double = 1,
                             canvasWidth: Int, canvasHeight: Int, fit: Fit) -> Placement {
        let full = Rect(x: 0, y: 0, width: sourceWidth, height: sourceHeight)
        let canvas = Rect(x: 0, y: 0, width: canvasWidth, height: canvasHeight)
        guard sourceWidth > 0, sourceHeight > 0, canvasWidth > 0, canvasHeight > 0 else {
            return Placement(crop: full, destination: canvas)
        }
        let sar = sampleAspect > 0 ? sampleAspect : 1
        let sourceAspect = Double(sourceWidth) * sar / Double(sourceHeight)
        let canvasAspect = Double(canvasWidth) / Double(canvasHeight)
        func even(_ v: Double) -> Int { max(2, Int((v / 2).rounded()) * 2) }
        switch fit {
        case .stretch:
            return Placement(crop: full, destination: canvas)
        case .contain:
            if abs(sourceAspect - canvasAspect) < 0.001 { return Placement(crop: full, destination: canvas) }
            if sourceAspect > canvasAspect {
                let h = min(canvasHeight, even(Double(canvasWidth) / sourceAspect))
                return Placement(crop: full, destination: Rect(x: 0, y: (canvasHeight - h) / 2, width: canvasWidth, height: h))
            } else {
                let w = min(canvasWidth, even(Double(canvasHeight) * sourceAspect))
                return Placement(crop: full, destination: Rect(x: (canvasWidth - w) / 2, y: 0, width: w, height: canvasHeight))
            }
        case .cover:
            if abs(sourceAspect - canvasAspect) < 0.001 { return Placement(crop: full, destination: canvas) }
            if sourceAspect > canvasAspect {
                // Too wide: keep full height, crop width.
                let w = min(sourceWidth, even(Double(sourceHeight) * canvasAspect / sar))
                return Placement(crop: Rect(x: (sourceWidth - w) / 2, y: 0, width: w, height: sourceHeight), destination: canvas)
            } else {
                let h = min(sourceHeight, even(Double(sourceWidth) * sar / canvasAspect))
                return Placement(crop: Rect(x: 0, y: (sourceHeight - h) / 2, width: sourceWidth, height: h), destination: canvas)
            }
        }
    }

    /// Where a logical-canvas point lands on the screen after `rotation` (clockwise), for a screen of
    /// `screenWidth`×`screenHeight` pixels. Used for the rotated copy and for touch coordinates.
    public static func screenPoint(canvasX x: Int, canvasY y: Int, rotation: Rotation,
                                   screenWidth: Int, screenHeight: Int) -> (x: Int, y: Int) {
        switch rotation {
        case .none: return (x, y)
        case .clockwise90: return (screenWidth - 1 - y, x)
        case .upsideDown: return (screenWidth - 1 - x, screenHeight - 1 - y)
        case .clockwise270: return (y, screenHeight - 1 - x)
        }
    }
}
