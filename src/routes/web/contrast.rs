//! The portal's colours against WCAG 2.2's contrast minimum (success criterion 1.4.3): every
//! text colour of `static/portal.css` reads at 4.5:1 or more on its background.

/// The colours of a style sheet: `:root` custom properties resolved.
struct Sheet {
    variables: Vec<(String, String)>,
}

impl Sheet {
    fn resolve(&self, value: &str) -> Option<[f64; 3]> {
        let value = value.trim().trim_end_matches("!important").trim();
        if let Some(name) = value.strip_prefix("var(").and_then(|v| v.strip_suffix(')')) {
            let (_, found) = self.variables.iter().find(|(n, _)| n == name.trim())?;
            return self.resolve(found);
        }
        rgb(value)
    }
}

/// `#rgb` or `#rrggbb` as 0..1 channels; anything else (a keyword, `transparent`) is `None`.
fn rgb(hex: &str) -> Option<[f64; 3]> {
    let digits = hex.strip_prefix('#')?;
    let long: String = match digits.len() {
        3 => digits.chars().flat_map(|c| [c, c]).collect(),
        6 => digits.to_owned(),
        _ => return None,
    };
    let channel = |i: usize| {
        u8::from_str_radix(&long[i..i + 2], 16)
            .ok()
            .map(|v| f64::from(v) / 255.0)
    };
    Some([channel(0)?, channel(2)?, channel(4)?])
}

/// Relative luminance (WCAG 2.2, "relative luminance").
fn luminance([r, g, b]: [f64; 3]) -> f64 {
    let linear = |c: f64| {
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
}

/// The contrast ratio of two colours, 1 to 21.
fn contrast(a: [f64; 3], b: [f64; 3]) -> f64 {
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSS: &str = include_str!("../../../static/portal.css");

    /// Each rule as (selector, declarations), comments removed; `@media` blocks flattened.
    fn rules(css: &str) -> Vec<(String, Vec<(String, String)>)> {
        let mut text = String::new();
        let mut rest = css;
        while let Some(start) = rest.find("/*") {
            text.push_str(&rest[..start]);
            rest = rest[start..]
                .split_once("*/")
                .map_or("", |(_, after)| after);
        }
        text.push_str(rest);
        let mut found = Vec::new();
        for chunk in text.split('}') {
            let Some((selector, body)) = chunk.rsplit_once('{') else {
                continue;
            };
            let declarations = body
                .split(';')
                .filter_map(|d| d.split_once(':'))
                .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                .collect();
            found.push((selector.trim().to_owned(), declarations));
        }
        found
    }

    #[test]
    fn contrast_follows_the_definition() {
        let (black, white) = (rgb("#000").unwrap(), rgb("#ffffff").unwrap());
        assert!((contrast(black, white) - 21.0).abs() < 1e-9);
        assert!((contrast(white, white) - 1.0).abs() < 1e-9);
        // #767676 on white is the well-known smallest grey that passes 4.5:1.
        let grey = rgb("#767676").unwrap();
        assert!(contrast(grey, white) >= 4.5 && contrast(grey, white) < 4.6);
    }

    #[test]
    fn every_text_colour_reads_at_4_5_to_1() {
        let rules = rules(CSS);
        let root = rules
            .iter()
            .find(|(selector, _)| selector == ":root")
            .expect("a :root rule");
        let sheet = Sheet {
            variables: root.1.clone(),
        };
        // Text without a background of its own stands on a card or on the page.
        let surfaces = [
            sheet.resolve("var(--card)").unwrap(),
            sheet.resolve("var(--bg)").unwrap(),
        ];
        let mut checked = 0;
        for (selector, declarations) in &rules {
            let value = |name: &str| {
                declarations
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.as_str())
            };
            let Some(colour) = value("color").and_then(|c| sheet.resolve(c)) else {
                continue;
            };
            let own = value("background")
                .or(value("background-color"))
                .and_then(|b| sheet.resolve(b));
            let backgrounds: Vec<[f64; 3]> = match own {
                Some(background) => vec![background],
                // Light text without a background of its own sits on a dark bar (the header);
                // the rule that gives the bar its colour is checked itself.
                None if luminance(colour) > 0.5 => continue,
                None => surfaces.to_vec(),
            };
            for background in backgrounds {
                let ratio = contrast(colour, background);
                assert!(
                    ratio >= 4.5,
                    "`{selector}`: contrast {ratio:.2}:1 is below 4.5:1"
                );
                checked += 1;
            }
        }
        assert!(checked > 20, "only {checked} colour pairs found");
    }
}
