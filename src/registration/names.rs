//! Client names a person could mistake for another (RFC 7591 §5: a self-registered client may
//! pick "a name that looks like another client's" to phish its users): a fold that makes two
//! names equal when they look alike, and the characters a shown name may never hold.
//!
//! The fold is a small skeleton in the spirit of Unicode TS #39 §4, not the full confusables
//! table: compatibility decomposition (NFKD: full-width and mathematical letters become plain
//! ones), combining marks dropped (`Dêmo` is `Demo`), case and everything that is not a letter
//! or digit dropped (spaces, punctuation, `Demo-Client` is `democlient`), the Cyrillic and
//! Greek letters drawn like Latin ones mapped to them, and the few Latin shapes that pass for
//! one another (`0`/`o`, `1`/`l`/`i`, `rn`/`m`, `vv`/`w`).

use unicode_normalization::UnicodeNormalization as _;
use unicode_normalization::char::is_combining_mark;

/// `name` folded: two names a person could take for one another fold to the same string.
pub(crate) fn skeleton(name: &str) -> String {
    let mut folded = String::with_capacity(name.len());
    for c in name.nfkd().filter(|c| !is_combining_mark(*c)) {
        for lower in c.to_lowercase() {
            if let Some(latin) = latin_look_alike(lower) {
                folded.push(latin);
            } else if lower.is_alphanumeric() {
                folded.push(lower);
            }
        }
    }
    folded.replace("rn", "m").replace("vv", "w")
}

/// Whether `c` must not be in a name shown to people: a control character, or an invisible
/// one that reorders or hides what is around it (bidirectional overrides and isolates, RLM and
/// LRM, zero-width characters, the soft hyphen, tags: Unicode TR #9, CVE-2021-42574).
pub(crate) fn is_hidden_or_reordering(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'
                | '\u{034F}'
                | '\u{061C}'
                | '\u{115F}'
                | '\u{1160}'
                | '\u{17B4}'
                | '\u{17B5}'
                | '\u{180B}'..='\u{180F}'
                | '\u{200B}'..='\u{200F}'
                | '\u{202A}'..='\u{202E}'
                | '\u{2060}'..='\u{206F}'
                | '\u{3164}'
                | '\u{FE00}'..='\u{FE0F}'
                | '\u{FEFF}'
                | '\u{FFA0}'
                | '\u{FFF9}'..='\u{FFFB}'
                | '\u{1D173}'..='\u{1D17A}'
                | '\u{E0000}'..='\u{E0FFF}'
        )
}

/// The Latin letter or digit `c` (already lowercased) is drawn like, if it is one of the
/// usual stand-ins.
fn latin_look_alike(c: char) -> Option<char> {
    Some(match c {
        // Latin shapes that pass for one another.
        '0' => 'o',
        '1' | 'i' | '|' | 'ı' | 'ɩ' => 'l',
        'ɑ' => 'a',
        'ɡ' => 'g',
        'ʏ' => 'y',
        // Cyrillic.
        'а' => 'a',
        'в' | 'ь' => 'b',
        'е' | 'ё' | 'є' => 'e',
        'к' => 'k',
        'м' => 'm',
        'н' | 'һ' => 'h',
        'о' => 'o',
        'р' => 'p',
        'с' => 'c',
        'т' => 't',
        'у' | 'ү' => 'y',
        'х' => 'x',
        'ѕ' => 's',
        'і' | 'ї' | 'ӏ' => 'l',
        'ј' => 'j',
        'ԁ' => 'd',
        'ԛ' => 'q',
        'ԝ' => 'w',
        // Greek.
        'α' => 'a',
        'β' => 'b',
        'ε' => 'e',
        'η' => 'n',
        'ι' => 'l',
        'κ' => 'k',
        'μ' | 'υ' => 'u',
        'ν' => 'v',
        'ο' => 'o',
        'ρ' => 'p',
        'τ' => 't',
        'χ' => 'x',
        'γ' => 'y',
        'ω' => 'w',
        'ζ' => 'z',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::{is_hidden_or_reordering, skeleton};

    #[test]
    fn look_alike_names_fold_to_one_skeleton() {
        let demo = skeleton("Demo Client");
        for look_alike in [
            "demo client",
            "DEMO-CLIENT",
            "Demo  Client.",
            "Dеmо Сlіеnt",           // Cyrillic е, о, С, і
            "Dεmο Clιent",           // Greek ε, ο, ι
            "Ｄｅｍｏ Ｃｌｉｅｎｔ", // full-width
            "𝐃𝐞𝐦𝐨 𝐂𝐥𝐢𝐞𝐧𝐭",           // mathematical bold
            "Dêmo Clîent",
            "Dem0 C1ient",
            "Derno Client",
        ] {
            assert_eq!(skeleton(look_alike), demo, "{look_alike}");
        }
        for other in ["Demo Clients", "Deno Client", "Plain Client", ""] {
            assert_ne!(skeleton(other), demo, "{other}");
        }
    }

    #[test]
    fn bidi_overrides_and_invisible_characters_are_hidden_or_reordering() {
        for c in [
            '\u{202E}',
            '\u{2066}',
            '\u{200B}',
            '\u{200F}',
            '\u{FEFF}',
            '\n',
            '\u{E0041}',
        ] {
            assert!(is_hidden_or_reordering(c), "{c:?}");
        }
        for c in ['a', 'é', 'Д', ' ', '-', '中'] {
            assert!(!is_hidden_or_reordering(c), "{c}");
        }
    }
}
