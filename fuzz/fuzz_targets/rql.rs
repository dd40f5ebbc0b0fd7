//! The RQL parser on any query string: it answers a query or an error, never panics, and what
//! it parses prints back as RQL that parses to the same query.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tacho::domain::rql;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(query) = rql::parse(text) {
        let printed = rql::print(&query);
        let again = rql::parse(&printed)
            .unwrap_or_else(|err| panic!("the printed query {printed:?} does not parse: {err}"));
        assert_eq!(again, query, "{text:?} printed as {printed:?}");
    }
});
