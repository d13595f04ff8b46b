import PCM
import Testing

@Suite("Device listing")
struct DeviceListingTests {
    @Test("name hints include the null PCM, with a description")
    func hintsIncludeNull() throws {
        let null = try #require(PCMDevice.availablePCMs().first { $0.name == "null" })
        #expect(null.description.contains("Discard"))
    }

    @Test("cards are listed in index order (none on a machine without sound hardware)")
    func cards() {
        let cards = PCMDevice.cards()
        #expect(cards.map(\.index) == cards.map(\.index).sorted())
        #expect(cards.allSatisfy { $0.index >= 0 && !$0.name.isEmpty })
    }
}
