//! The fonts every report is typeset with, compiled into the binary.
//!
//! Reports must look the same on every host, so no system font is ever
//! consulted: these faces are the only ones the typesetter can see.

use typst::foundations::Bytes;
use typst::text::{Font, FontBook};

/// The shipped font files: Latin, Arabic and Simplified Chinese, each in a
/// regular and a bold weight so that `strong` never falls back to synthetic
/// emboldening.
const FILES: [&[u8]; 6] = [
    include_bytes!("../../fonts/NotoSans-Regular.ttf"),
    include_bytes!("../../fonts/NotoSans-Bold.ttf"),
    include_bytes!("../../fonts/NotoSansArabic-Regular.ttf"),
    include_bytes!("../../fonts/NotoSansArabic-Bold.ttf"),
    include_bytes!("../../fonts/NotoSansSC-Regular.ttf"),
    include_bytes!("../../fonts/NotoSansSC-Bold.ttf"),
];

/// Parses the embedded fonts and indexes them.
///
/// The font at position `i` of the returned vector is the face described by
/// entry `i` of the book, which is the contract `World::font` relies on.
pub(crate) fn load() -> (FontBook, Vec<Font>) {
    let fonts: Vec<Font> = FILES
        .iter()
        .flat_map(|data| Font::iter(Bytes::new(*data)))
        .collect();
    let book = FontBook::from_fonts(&fonts);
    (book, fonts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_a_regular_and_a_bold_face() {
        let (book, fonts) = load();
        assert_eq!(fonts.len(), FILES.len());
        for family in ["Noto Sans", "Noto Sans Arabic", "Noto Sans CJK SC"] {
            let mut weights: Vec<u16> = book
                .families()
                .filter(|(name, _)| *name == family)
                .flat_map(|(_, ids)| ids)
                .filter_map(|id| book.info(id))
                .map(|info| info.variant.weight.to_number())
                .collect();
            weights.sort_unstable();
            assert_eq!(weights, [400, 700], "faces of {family}");
        }
    }
}
