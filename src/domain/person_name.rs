//! A person's full name from its two parts, in the order the name's own language writes it.
//!
//! CLDR's person-name formatting (UTS #35, part 8, "Person Names") takes the order from the
//! name's locale, and every formatting locale lists Chinese, Japanese and Korean names as
//! surname-first (`nameOrderLocales`). Tacho stores no locale with a name, so the locale is
//! inferred from the script, as CLDR does when a name carries none: a name written entirely in
//! Han, kana or Hangul is surname first, the rest given name first. Between the parts, Chinese
//! and Japanese write no space (CLDR's `foreignSpaceReplacement` is empty for zh and ja);
//! Korean and every other script write one.

/// The full name of `given` and `family`, in the order its script implies.
pub fn full_name(given: &str, family: &str) -> String {
    let (given, family) = (given.trim(), family.trim());
    if given.is_empty() || family.is_empty() {
        return format!("{given}{family}");
    }
    match (script_of(given), script_of(family)) {
        (Some(Script::HanOrKana), Some(Script::HanOrKana)) => format!("{family}{given}"),
        (Some(Script::Hangul), Some(Script::Hangul)) => format!("{family} {given}"),
        _ => format!("{given} {family}"),
    }
}

/// The East Asian scripts whose names come surname first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Script {
    HanOrKana,
    Hangul,
}

/// The script every letter of `part` is written in, if it is one of [`Script`]'s.
fn script_of(part: &str) -> Option<Script> {
    let mut found = None;
    for c in part.chars().filter(|c| c.is_alphabetic()) {
        let script = match c as u32 {
            0x3040..=0x30FF
            | 0x31F0..=0x31FF
            | 0x3400..=0x4DBF
            | 0x4E00..=0x9FFF
            | 0xF900..=0xFAFF
            | 0x20000..=0x3134F => Script::HanOrKana,
            0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF => Script::Hangul,
            _ => return None,
        };
        if found.is_some_and(|f| f != script) {
            return None;
        }
        found = Some(script);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::full_name;

    #[test]
    fn names_follow_the_order_of_their_script() {
        assert_eq!(full_name("伟", "陈"), "陈伟");
        assert_eq!(full_name("さくら", "山田"), "山田さくら");
        assert_eq!(full_name("민준", "김"), "김 민준");
        assert_eq!(full_name("Anna", "de Vries"), "Anna de Vries");
        assert_eq!(full_name("محمد", "العلي"), "محمد العلي");
        // A name mixing scripts is given first, as a Latin one.
        assert_eq!(full_name("Wei", "陈"), "Wei 陈");
        assert_eq!(full_name(" Anna ", ""), "Anna");
    }
}
