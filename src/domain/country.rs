//! ISO 3166-1 alpha-2 country codes.

/// Every officially assigned ISO 3166-1 alpha-2 code, upper-case and sorted
/// so that [`is_alpha2`] can binary-search it.
pub const ISO_3166_ALPHA2: [&str; 249] = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "YE", "YT", "ZA", "ZM", "ZW",
];

/// Returns whether `code` is an assigned ISO 3166-1 alpha-2 code.
///
/// The match is exact: callers that accept user input in any case must
/// upper-case it first.
pub fn is_alpha2(code: &str) -> bool {
    ISO_3166_ALPHA2.binary_search(&code).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_complete_sorted_and_unique() {
        assert_eq!(ISO_3166_ALPHA2.len(), 249);
        // Strictly increasing implies both sorted and free of duplicates,
        // which binary search relies on.
        assert!(ISO_3166_ALPHA2.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn every_code_is_two_upper_case_ascii_letters() {
        for code in ISO_3166_ALPHA2 {
            assert_eq!(code.len(), 2, "{code}");
            assert!(code.bytes().all(|b| b.is_ascii_uppercase()), "{code}");
        }
    }

    #[test]
    fn recognises_assigned_codes_only() {
        for code in ["AD", "DE", "NL", "US", "ZW", "SS", "BQ", "CW", "SX", "AX"] {
            assert!(is_alpha2(code), "{code}");
        }
        // Withdrawn (AN, YU, CS), user-assigned (XK, ZZ) and reserved (UK, EU) codes.
        for code in ["AN", "YU", "CS", "XK", "ZZ", "UK", "EU", "", "D", "DEU"] {
            assert!(!is_alpha2(code), "{code}");
        }
    }

    #[test]
    fn lookup_is_case_sensitive() {
        assert!(!is_alpha2("de"));
        assert!(!is_alpha2("De"));
    }
}
