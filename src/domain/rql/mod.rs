//! Persvr-style RQL (Resource Query Language) query strings.
//!
//! [`parse()`] reads the raw, still percent-encoded URL query string of a list
//! request into a [`Query`]; [`print()`] writes a [`Query`] back as canonical
//! RQL that parses to the same value.
//!
//! # Syntax
//!
//! - Conditions as calls: `eq ne gt ge lt le` (`eq(field,value)`),
//!   `in`/`out` (`in(field,(a,b))` or `in(field,a,b)`), `like(field,pattern)`
//!   with `*` as the wildcard, `contains`/`excludes(field,value)` for array
//!   fields, and `and(...)`/`or(...)` over conditions.
//! - Shorthands: `field=value`, `!=`, `<`, `<=`, `>`, `>=`, and the FIQL form
//!   `field=operator=value` (`a=gt=5`, `a=in=(x,y)`).
//! - `&` is AND, `|` is OR, `&` binds tighter, parentheses group.
//! - Directives `sort(+a,-b)`, `limit(count[,offset])`, `select(a,b)` and
//!   `skipCount()`, each at most once and only as a top-level `&` term.
//! - Bounds: nesting [`MAX_DEPTH`], terms [`MAX_TERMS`], values per `in`/`out` list
//!   [`MAX_LIST_VALUES`] and per query [`MAX_QUERY_VALUES`], `limit` offset [`MAX_OFFSET`].
//! - Values are untyped unless prefixed with `string:`, `number:`,
//!   `boolean:`, `date:` or `epoch:` (milliseconds).
//!
//! Field names and values are percent-decoded twice, as clients
//! double-encode them, and the printer encodes them twice to match.

pub mod ast;
pub mod parse;
pub mod print;
#[cfg(test)]
mod tests;

pub use ast::*;
pub use parse::{
    MAX_DEPTH, MAX_LIST_VALUES, MAX_OFFSET, MAX_QUERY_VALUES, MAX_TERMS, RqlError, parse,
};
pub use print::print;
