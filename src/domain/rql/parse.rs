//! Parsing of raw (still percent-encoded) RQL query strings.

use std::fmt;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Utc};
use percent_encoding::{percent_decode, percent_decode_str};

use super::ast::{CompareOp, Expr, Limit, Query, SortKey, Value};

/// Deepest allowed nesting of parentheses, `and(...)` and `or(...)`.
pub const MAX_DEPTH: usize = 32;

/// Most terms a query may hold: each condition (`eq(a,1)`, `a=1`, `in(a,(1,2))`, …) is one,
/// and so is each field named in `sort` and `select`; `and`, `or` and parentheses are not.
/// Each term becomes SQL to plan and run; clients send a handful.
pub const MAX_TERMS: usize = 100;

/// Most values one `in` or `out` list may hold.
pub const MAX_LIST_VALUES: usize = 1_000;

/// Most values all `in` and `out` lists of a query may hold together. Each value is a bind
/// parameter of the SQL; this keeps a query far below SQLite's 32,766 and PostgreSQL's
/// 65,535, which [`MAX_TERMS`] lists of [`MAX_LIST_VALUES`] would pass.
pub const MAX_QUERY_VALUES: usize = 10_000;

/// Largest offset of `limit(count,offset)`. The database reads and throws away `offset` rows
/// to answer a page; 100,000 is 2,000 pages of the largest size. Deeper lists are read by
/// narrowing the filter (e.g. `gt(id,<last id seen>)&sort(id)`).
pub const MAX_OFFSET: u64 = 100_000;

/// Why a query string was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RqlError {
    /// Byte offset in the string given to [`parse`] (a leading `?` counts).
    pub position: usize,
    /// What was wrong, or what was expected there.
    pub message: String,
}

impl fmt::Display for RqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at position {}: {}", self.position, self.message)
    }
}

impl std::error::Error for RqlError {}

/// Parses a raw URL query string, as received on the wire, into a [`Query`].
///
/// The input may start with `?` and may be empty. Field names and values are
/// percent-decoded twice, because clients double-encode values; invalid
/// percent sequences are kept as they are and invalid UTF-8 is replaced with
/// U+FFFD. Error positions are byte offsets in `raw_query` itself.
pub fn parse(raw_query: &str) -> Result<Query, RqlError> {
    let start = usize::from(raw_query.starts_with('?'));
    let mut parser = Parser {
        tokens: tokenize(raw_query, start),
        next: 0,
        terms: 0,
        values: 0,
    };
    parser.parse_query()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind<'a> {
    Text(&'a str),
    Open,
    Close,
    Comma,
    Amp,
    Pipe,
    Equals,
    NotEquals,
    Less,
    LessEquals,
    Greater,
    GreaterEquals,
    End,
}

#[derive(Debug, Clone, Copy)]
struct Token<'a> {
    kind: Kind<'a>,
    position: usize,
}

/// Splits on structural characters only, so that encoded text stays intact
/// until each piece is decoded on its own. A `!` is structural only as part
/// of `!=`, since unencoded `!` is common in values.
fn tokenize(input: &str, start: usize) -> Vec<Token<'_>> {
    let bytes = input.as_bytes();
    let mut tokens = Vec::new();
    let mut i = start;
    while i < bytes.len() {
        let next_is_equals = bytes.get(i + 1) == Some(&b'=');
        let (kind, width) = match bytes[i] {
            b'(' => (Kind::Open, 1),
            b')' => (Kind::Close, 1),
            b',' => (Kind::Comma, 1),
            b'&' => (Kind::Amp, 1),
            b'|' => (Kind::Pipe, 1),
            b'=' => (Kind::Equals, 1),
            b'!' if next_is_equals => (Kind::NotEquals, 2),
            b'<' if next_is_equals => (Kind::LessEquals, 2),
            b'<' => (Kind::Less, 1),
            b'>' if next_is_equals => (Kind::GreaterEquals, 2),
            b'>' => (Kind::Greater, 1),
            _ => {
                let end = (i..bytes.len())
                    .find(|&j| is_structural(bytes, j))
                    .unwrap_or(bytes.len());
                // Structural characters are ASCII, so `i` and `end` are
                // always character boundaries.
                (Kind::Text(&input[i..end]), end - i)
            }
        };
        tokens.push(Token { kind, position: i });
        i += width;
    }
    tokens.push(Token {
        kind: Kind::End,
        position: input.len(),
    });
    tokens
}

fn is_structural(bytes: &[u8], i: usize) -> bool {
    match bytes[i] {
        b'(' | b')' | b',' | b'&' | b'|' | b'=' | b'<' | b'>' => true,
        b'!' => bytes.get(i + 1) == Some(&b'='),
        _ => false,
    }
}

/// One argument of an operator call.
#[derive(Debug, Clone)]
enum Arg<'a> {
    /// A single, possibly empty, raw token.
    Single(&'a str, usize),
    /// A parenthesised list of raw tokens.
    List(Vec<(&'a str, usize)>),
}

/// A top-level term: either part of the filter or a directive.
enum Term {
    Filter(Expr),
    Sort(Vec<SortKey>),
    Limit(Limit),
    Select(Vec<String>),
    SkipCount,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Nested,
}

#[derive(Debug, Clone, Copy)]
enum FilterOp {
    Compare(CompareOp),
    In { negated: bool },
    Like,
    Contains { negated: bool },
}

enum Operator {
    Filter(FilterOp),
    And,
    Or,
    Directive,
}

fn operator(name: &str) -> Option<Operator> {
    let filter = |op| Some(Operator::Filter(op));
    match name {
        "eq" => filter(FilterOp::Compare(CompareOp::Eq)),
        "ne" => filter(FilterOp::Compare(CompareOp::Ne)),
        "gt" => filter(FilterOp::Compare(CompareOp::Gt)),
        "ge" => filter(FilterOp::Compare(CompareOp::Ge)),
        "lt" => filter(FilterOp::Compare(CompareOp::Lt)),
        "le" => filter(FilterOp::Compare(CompareOp::Le)),
        "in" => filter(FilterOp::In { negated: false }),
        "out" => filter(FilterOp::In { negated: true }),
        "like" => filter(FilterOp::Like),
        "contains" => filter(FilterOp::Contains { negated: false }),
        "excludes" => filter(FilterOp::Contains { negated: true }),
        "and" => Some(Operator::And),
        "or" => Some(Operator::Or),
        "sort" | "limit" | "select" | "skipCount" => Some(Operator::Directive),
        _ => None,
    }
}

struct Parser<'a> {
    tokens: Vec<Token<'a>>,
    next: usize,
    /// Terms read so far, against [`MAX_TERMS`].
    terms: usize,
    /// Values of `in` and `out` lists read so far, against [`MAX_QUERY_VALUES`].
    values: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Token<'a> {
        self.tokens[self.next]
    }

    fn peek_kind_at(&self, ahead: usize) -> Kind<'a> {
        self.tokens
            .get(self.next + ahead)
            .map_or(Kind::End, |token| token.kind)
    }

    fn bump(&mut self) -> Token<'a> {
        let token = self.peek();
        if token.kind != Kind::End {
            self.next += 1;
        }
        token
    }

    /// Counts `count` more terms, the first of them at `position`.
    fn count_terms(&mut self, count: usize, position: usize) -> Result<(), RqlError> {
        self.terms += count;
        if self.terms > MAX_TERMS {
            return Err(error(
                position,
                format!(
                    "too many terms: a query may hold at most {MAX_TERMS} (conditions, sort keys and selected fields)"
                ),
            ));
        }
        Ok(())
    }

    /// Checks the values of one `in` or `out` list, and of all lists so far.
    fn count_values(&mut self, name: &str, values: &[(&str, usize)]) -> Result<(), RqlError> {
        if let Some(&(_, position)) = values.get(MAX_LIST_VALUES) {
            return Err(error(
                position,
                format!("too many values: `{name}` takes at most {MAX_LIST_VALUES}"),
            ));
        }
        self.values += values.len();
        if self.values > MAX_QUERY_VALUES {
            let position = values.first().map_or(0, |&(_, position)| position);
            return Err(error(
                position,
                format!(
                    "too many values: the `in` and `out` lists of a query may hold at most {MAX_QUERY_VALUES} together"
                ),
            ));
        }
        Ok(())
    }

    fn expect_close(&mut self) -> Result<(), RqlError> {
        let token = self.peek();
        if token.kind == Kind::Close {
            self.bump();
            Ok(())
        } else {
            Err(error(token.position, "expected `)`"))
        }
    }

    fn parse_query(&mut self) -> Result<Query, RqlError> {
        let mut query = Query::default();
        // Directives are only meaningful when they apply to the whole query,
        // so they are rejected once the top level turns out to be an OR.
        let mut first_directive: Option<(usize, &'a str)> = None;
        let mut seen_sort = false;
        let mut branches: Vec<Expr> = Vec::new();
        loop {
            let branch_start = self.peek().position;
            let mut terms = Vec::new();
            loop {
                let token = self.peek();
                match token.kind {
                    // Empty top-level terms (`a=1&&b=2`, a trailing `&`) are
                    // harmless and some clients produce them.
                    Kind::Amp => {
                        self.bump();
                        continue;
                    }
                    Kind::Pipe | Kind::End => break,
                    _ => {}
                }
                let term = self.parse_term(0, Level::Top)?;
                if let Kind::Text(name) = token.kind
                    && !matches!(term, Term::Filter(_))
                {
                    first_directive.get_or_insert((token.position, name));
                }
                let twice = |name: &str| error(token.position, format!("`{name}` given twice"));
                match term {
                    Term::Filter(expr) => terms.push(expr),
                    Term::Sort(keys) => {
                        if seen_sort {
                            return Err(twice("sort"));
                        }
                        seen_sort = true;
                        query.sort = keys;
                    }
                    Term::Limit(limit) => {
                        if query.limit.replace(limit).is_some() {
                            return Err(twice("limit"));
                        }
                    }
                    Term::Select(fields) => {
                        if query.select.replace(fields).is_some() {
                            return Err(twice("select"));
                        }
                    }
                    Term::SkipCount => {
                        if std::mem::replace(&mut query.skip_count, true) {
                            return Err(twice("skipCount"));
                        }
                    }
                }
                let after = self.peek();
                if !matches!(after.kind, Kind::Amp | Kind::Pipe | Kind::End) {
                    return Err(error(after.position, "expected `&`, `|` or end of query"));
                }
            }
            let token = self.peek();
            if token.kind == Kind::Pipe || !branches.is_empty() {
                if let Some((position, name)) = first_directive {
                    return Err(error(
                        position,
                        format!("`{name}` must apply to the whole query, not to one side of `|`"),
                    ));
                }
                if terms.is_empty() {
                    return Err(error(branch_start, "expected a condition"));
                }
            }
            if let Some(expr) = join(terms, Group::And) {
                branches.push(expr);
            }
            if token.kind == Kind::Pipe {
                self.bump();
            } else {
                break;
            }
        }
        query.filter = join(branches, Group::Or);
        Ok(query)
    }

    /// `expr ('|' expr)*` inside parentheses or an `and`/`or` argument.
    fn parse_nested_or(&mut self, depth: usize) -> Result<Expr, RqlError> {
        let mut branches = Vec::new();
        loop {
            let mut terms = Vec::new();
            loop {
                match self.parse_term(depth, Level::Nested)? {
                    Term::Filter(expr) => terms.push(expr),
                    _ => unreachable!("directives are rejected below the top level"),
                }
                let token = self.peek();
                match token.kind {
                    Kind::Amp => {
                        self.bump();
                    }
                    Kind::Pipe | Kind::Close | Kind::Comma => break,
                    Kind::End => return Err(error(token.position, "expected `)`")),
                    _ => {
                        return Err(error(token.position, "expected `&`, `|`, `,` or `)`"));
                    }
                }
            }
            branches.extend(join(terms, Group::And));
            if self.peek().kind == Kind::Pipe {
                self.bump();
            } else {
                break;
            }
        }
        Ok(join(branches, Group::Or).expect("at least one branch is parsed"))
    }

    fn parse_term(&mut self, depth: usize, level: Level) -> Result<Term, RqlError> {
        let token = self.peek();
        match token.kind {
            Kind::Open => {
                let inner = enter(depth, token.position)?;
                self.bump();
                let expr = self.parse_nested_or(inner)?;
                self.expect_close()?;
                Ok(Term::Filter(expr))
            }
            Kind::Text(name) => {
                self.bump();
                let after = self.peek();
                let op = match after.kind {
                    Kind::Open => return self.parse_call(name, token.position, depth, level),
                    Kind::Equals => CompareOp::Eq,
                    Kind::NotEquals => CompareOp::Ne,
                    Kind::Less => CompareOp::Lt,
                    Kind::LessEquals => CompareOp::Le,
                    Kind::Greater => CompareOp::Gt,
                    Kind::GreaterEquals => CompareOp::Ge,
                    _ => {
                        return Err(error(
                            after.position,
                            format!(
                                "expected `(` or a comparison operator after `{}`",
                                excerpt(name)
                            ),
                        ));
                    }
                };
                self.count_terms(1, token.position)?;
                self.parse_comparison(name, token.position, op)
                    .map(Term::Filter)
            }
            _ => Err(error(token.position, "expected a condition")),
        }
    }

    /// `name(args)`; the current token is the `(`.
    fn parse_call(
        &mut self,
        name: &'a str,
        position: usize,
        depth: usize,
        level: Level,
    ) -> Result<Term, RqlError> {
        let Some(op) = operator(name) else {
            return Err(unknown_operator(name, position));
        };
        match op {
            Operator::Filter(op) => {
                self.count_terms(1, position)?;
                let args = self.parse_args()?;
                if let FilterOp::In { .. } = op {
                    self.count_values(name, &list_values(&args))?;
                }
                filter_from_args(op, name, position, args).map(Term::Filter)
            }
            Operator::And | Operator::Or => {
                let inner = enter(depth, self.peek().position)?;
                self.bump();
                if self.peek().kind == Kind::Close {
                    return Err(error(
                        position,
                        format!("`{name}` takes one or more conditions"),
                    ));
                }
                let mut terms = Vec::new();
                loop {
                    terms.push(self.parse_nested_or(inner)?);
                    if self.peek().kind == Kind::Comma {
                        self.bump();
                    } else {
                        self.expect_close()?;
                        break;
                    }
                }
                let group = if matches!(op, Operator::And) {
                    Group::And
                } else {
                    Group::Or
                };
                let expr = join(terms, group);
                Ok(Term::Filter(expr.expect("at least one argument is parsed")))
            }
            Operator::Directive => {
                if level == Level::Nested {
                    return Err(error(
                        position,
                        format!(
                            "`{name}` is only allowed at the top level of the query, joined with `&`"
                        ),
                    ));
                }
                let args = self.parse_args()?;
                if matches!(name, "sort" | "select") {
                    self.count_terms(args.len(), position)?;
                }
                directive_from_args(name, position, args)
            }
        }
    }

    /// `field op value`, `field=op=value` or `field=op=(values)`; the current
    /// token is the operator, already read as `op`.
    fn parse_comparison(
        &mut self,
        field: &'a str,
        position: usize,
        op: CompareOp,
    ) -> Result<Expr, RqlError> {
        let field = field_name(field, position)?;
        self.bump();
        if op == CompareOp::Eq
            && let (Kind::Text(name), Kind::Equals) = (self.peek_kind_at(0), self.peek_kind_at(1))
        {
            let name_position = self.peek().position;
            self.bump();
            self.bump();
            return self.parse_fiql(field, name, name_position);
        }
        let (raw, value_position) = self.single_value();
        Ok(Expr::Compare {
            op,
            field,
            value: value(raw, value_position)?,
        })
    }

    /// The value part of `field=name=value`; the current token follows the
    /// second `=`.
    fn parse_fiql(&mut self, field: String, name: &str, position: usize) -> Result<Expr, RqlError> {
        let op = match operator(name) {
            Some(Operator::Filter(op)) => op,
            Some(_) => {
                return Err(error(
                    position,
                    format!("`{name}` cannot be used in the `field=operator=value` form"),
                ));
            }
            None => return Err(unknown_operator(name, position)),
        };
        if let FilterOp::In { negated } = op
            && self.peek().kind == Kind::Open
        {
            let raw_values = self.parse_list()?;
            self.count_values(name, &raw_values)?;
            let values = raw_values
                .into_iter()
                .map(|(raw, position)| value(raw, position))
                .collect::<Result<_, _>>()?;
            return Ok(Expr::In {
                field,
                values,
                negated,
            });
        }
        let (raw, value_position) = self.single_value();
        let value = value(raw, value_position)?;
        Ok(match op {
            FilterOp::Compare(op) => Expr::Compare { op, field, value },
            FilterOp::In { negated } => Expr::In {
                field,
                values: vec![value],
                negated,
            },
            FilterOp::Like => Expr::Like {
                field,
                pattern: value,
            },
            FilterOp::Contains { negated } => Expr::Contains {
                field,
                value,
                negated,
            },
        })
    }

    /// A possibly empty value token.
    fn single_value(&mut self) -> (&'a str, usize) {
        let token = self.peek();
        match token.kind {
            Kind::Text(raw) => {
                self.bump();
                (raw, token.position)
            }
            _ => ("", token.position),
        }
    }

    /// `(arg, ...)` where each argument is a token or a `(list)`; the current
    /// token is the `(`. `()` has no arguments, `(,)` has two empty ones.
    fn parse_args(&mut self) -> Result<Vec<Arg<'a>>, RqlError> {
        self.bump();
        let mut args = Vec::new();
        if self.peek().kind == Kind::Close {
            self.bump();
            return Ok(args);
        }
        loop {
            let token = self.peek();
            let arg = match token.kind {
                Kind::Open => Arg::List(self.parse_list()?),
                Kind::Text(raw) => {
                    self.bump();
                    Arg::Single(raw, token.position)
                }
                Kind::Comma | Kind::Close => Arg::Single("", token.position),
                Kind::End => return Err(error(token.position, "expected `)`")),
                _ => return Err(error(token.position, "expected a value")),
            };
            args.push(arg);
            if !self.list_continues()? {
                return Ok(args);
            }
        }
    }

    /// `(value, ...)`; the current token is the `(`. `()` is the empty list.
    fn parse_list(&mut self) -> Result<Vec<(&'a str, usize)>, RqlError> {
        self.bump();
        let mut items = Vec::new();
        if self.peek().kind == Kind::Close {
            self.bump();
            return Ok(items);
        }
        loop {
            let token = self.peek();
            match token.kind {
                Kind::Text(raw) => {
                    self.bump();
                    items.push((raw, token.position));
                }
                Kind::Comma | Kind::Close => items.push(("", token.position)),
                Kind::Open => return Err(error(token.position, "lists cannot be nested")),
                Kind::End => return Err(error(token.position, "expected `)`")),
                _ => return Err(error(token.position, "expected a value")),
            }
            if !self.list_continues()? {
                return Ok(items);
            }
        }
    }

    /// Consumes the `,` or `)` after a list element; `true` if more follow.
    fn list_continues(&mut self) -> Result<bool, RqlError> {
        let token = self.peek();
        match token.kind {
            Kind::Comma => {
                self.bump();
                Ok(true)
            }
            Kind::Close => {
                self.bump();
                Ok(false)
            }
            Kind::End => Err(error(token.position, "expected `)`")),
            _ => Err(error(token.position, "expected `,` or `)`")),
        }
    }
}

/// The values of an `in` or `out` call, in either of its forms: `in(a,(1,2))` or `in(a,1,2)`.
fn list_values<'a>(args: &[Arg<'a>]) -> Vec<(&'a str, usize)> {
    args.iter()
        .skip(1)
        .flat_map(|arg| match arg {
            Arg::Single(raw, position) => vec![(*raw, *position)],
            Arg::List(items) => items.clone(),
        })
        .collect()
}

fn filter_from_args(
    op: FilterOp,
    name: &str,
    position: usize,
    args: Vec<Arg<'_>>,
) -> Result<Expr, RqlError> {
    let usage = match op {
        FilterOp::Compare(_) | FilterOp::Contains { .. } => "a field and a value",
        FilterOp::In { .. } => "a field and a list of values",
        FilterOp::Like => "a field and a pattern",
    };
    let usage_error = || error(position, format!("`{name}` takes {usage}"));
    let mut args = args.into_iter();
    let (Some(Arg::Single(raw_field, field_position)), Some(first)) = (args.next(), args.next())
    else {
        return Err(usage_error());
    };
    let field = field_name(raw_field, field_position)?;
    let rest: Vec<Arg<'_>> = args.collect();
    if let FilterOp::In { negated } = op {
        let raw_values = match first {
            Arg::List(items) if rest.is_empty() => items,
            Arg::Single(raw, position) => {
                let mut items = vec![(raw, position)];
                for arg in rest {
                    match arg {
                        Arg::Single(raw, position) => items.push((raw, position)),
                        Arg::List(_) => return Err(usage_error()),
                    }
                }
                items
            }
            Arg::List(_) => return Err(usage_error()),
        };
        let values = raw_values
            .into_iter()
            .map(|(raw, position)| value(raw, position))
            .collect::<Result<_, _>>()?;
        return Ok(Expr::In {
            field,
            values,
            negated,
        });
    }
    let Arg::Single(raw, value_position) = first else {
        return Err(usage_error());
    };
    if !rest.is_empty() {
        return Err(usage_error());
    }
    let value = value(raw, value_position)?;
    Ok(match op {
        FilterOp::Compare(op) => Expr::Compare { op, field, value },
        FilterOp::Like => Expr::Like {
            field,
            pattern: value,
        },
        FilterOp::Contains { negated } => Expr::Contains {
            field,
            value,
            negated,
        },
        FilterOp::In { .. } => unreachable!("handled above"),
    })
}

fn directive_from_args(name: &str, position: usize, args: Vec<Arg<'_>>) -> Result<Term, RqlError> {
    let usage = match name {
        "sort" => "one or more fields, each optionally prefixed with `+` or `-`",
        "limit" => "a count and an optional offset",
        "select" => "one or more fields",
        _ => "no arguments",
    };
    let usage_error = || error(position, format!("`{name}` takes {usage}"));
    let mut singles = Vec::with_capacity(args.len());
    for arg in args {
        match arg {
            Arg::Single(raw, position) => singles.push((raw, position)),
            Arg::List(_) => return Err(usage_error()),
        }
    }
    match name {
        "sort" if !singles.is_empty() => singles
            .into_iter()
            .map(|(raw, position)| {
                let decoded = decode(raw);
                let (descending, field) = match decoded.as_bytes().first() {
                    Some(b'-') => (true, &decoded[1..]),
                    Some(b'+') => (false, &decoded[1..]),
                    _ => (false, decoded.as_str()),
                };
                check_field(field, raw, position)?;
                Ok(SortKey {
                    field: field.to_owned(),
                    descending,
                })
            })
            .collect::<Result<_, _>>()
            .map(Term::Sort),
        "limit" if matches!(singles.len(), 1 | 2) => {
            let count = non_negative(singles[0])?;
            let offset = singles.get(1).copied().map(non_negative).transpose()?;
            if let (Some(offset), Some(&(_, at))) = (offset, singles.get(1))
                && offset > MAX_OFFSET
            {
                return Err(error(
                    at,
                    format!("offset too large: `limit` takes an offset of at most {MAX_OFFSET}"),
                ));
            }
            Ok(Term::Limit(Limit {
                count,
                offset: offset.unwrap_or(0),
            }))
        }
        "select" if !singles.is_empty() => singles
            .into_iter()
            .map(|(raw, position)| field_name(raw, position))
            .collect::<Result<_, _>>()
            .map(Term::Select),
        "skipCount" if singles.is_empty() => Ok(Term::SkipCount),
        _ => Err(usage_error()),
    }
}

fn non_negative((raw, position): (&str, usize)) -> Result<u64, RqlError> {
    let text = decode(raw);
    // `u64::from_str` would also take a leading `+`.
    if !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && let Ok(number) = text.parse()
    {
        return Ok(number);
    }
    Err(error(
        position,
        format!(
            "expected a non-negative integer, found `{}`",
            excerpt(&text)
        ),
    ))
}

/// Checks the nesting depth before entering a group.
fn enter(depth: usize, position: usize) -> Result<usize, RqlError> {
    if depth >= MAX_DEPTH {
        Err(error(
            position,
            format!("nesting deeper than {MAX_DEPTH} levels"),
        ))
    } else {
        Ok(depth + 1)
    }
}

#[derive(Debug, Clone, Copy)]
enum Group {
    And,
    Or,
}

/// Combines terms into the canonical shape the printer reproduces: no
/// one-element groups, and no group directly inside a group of its own kind.
fn join(terms: Vec<Expr>, group: Group) -> Option<Expr> {
    let mut flat = Vec::with_capacity(terms.len());
    for term in terms {
        match (group, term) {
            (Group::And, Expr::And(inner)) | (Group::Or, Expr::Or(inner)) => flat.extend(inner),
            (_, term) => flat.push(term),
        }
    }
    match (flat.len(), group) {
        (0, _) => None,
        (1, _) => flat.pop(),
        (_, Group::And) => Some(Expr::And(flat)),
        (_, Group::Or) => Some(Expr::Or(flat)),
    }
}

fn field_name(raw: &str, position: usize) -> Result<String, RqlError> {
    let decoded = decode(raw);
    check_field(&decoded, raw, position)?;
    Ok(decoded)
}

fn check_field(field: &str, raw: &str, position: usize) -> Result<(), RqlError> {
    if field.is_empty() {
        return Err(error(position, "expected a field name"));
    }
    let mut bytes = field.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    if first_ok && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.') {
        Ok(())
    } else {
        Err(error(
            position,
            format!(
                "invalid field name `{}`: use letters, digits, `_` and `.`, starting with a letter or `_`",
                excerpt(raw)
            ),
        ))
    }
}

/// Interprets a raw value token; a type prefix is recognised only when
/// written literally, so an encoded `:` keeps a value untyped.
fn value(raw: &str, position: usize) -> Result<Value, RqlError> {
    let typed = raw.split_once(':').filter(|(prefix, _)| {
        matches!(*prefix, "string" | "number" | "boolean" | "date" | "epoch")
    });
    let Some((prefix, rest)) = typed else {
        return Ok(Value::Untyped(decode(raw)));
    };
    let text = decode(rest);
    let invalid = |expected: &str| {
        error(
            position,
            format!(
                "invalid {prefix} value `{}`: expected {expected}",
                excerpt(&text)
            ),
        )
    };
    match prefix {
        "string" => Ok(Value::String(text)),
        "number" => match text.parse::<f64>() {
            Ok(number) if number.is_finite() => Ok(Value::Number(number)),
            _ => Err(invalid("a finite number")),
        },
        "boolean" => match text.as_str() {
            "true" => Ok(Value::Boolean(true)),
            "false" => Ok(Value::Boolean(false)),
            _ => Err(invalid("`true` or `false`")),
        },
        "date" => date(&text).map(Value::Date).ok_or_else(|| {
            invalid("an RFC 3339 date-time or a YYYY-MM-DD date, years 0000 to 9999")
        }),
        "epoch" => text
            .parse::<i64>()
            .map(Value::Epoch)
            .map_err(|_| invalid("an integer number of milliseconds")),
        _ => unreachable!("prefixes are filtered above"),
    }
}

fn date(text: &str) -> Option<DateTime<Utc>> {
    let parsed = DateTime::parse_from_rfc3339(text)
        .map(|date| date.with_timezone(&Utc))
        .or_else(|_| {
            // ISO 8601 without an offset is taken as UTC.
            NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f").map(|date| date.and_utc())
        })
        .or_else(|_| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .map(|date| date.and_time(chrono::NaiveTime::MIN).and_utc())
        })
        .ok()?;
    // An offset can push a four-digit year out of the range RFC 3339 can
    // write, and the printer must be able to write back what was parsed.
    (0..=9999).contains(&parsed.year()).then_some(parsed)
}

/// Percent-decodes twice, on bytes, so that a UTF-8 sequence split across the
/// two encoding layers still decodes correctly.
fn decode(raw: &str) -> String {
    let once: Vec<u8> = percent_decode_str(raw).collect();
    let twice: Vec<u8> = percent_decode(&once).collect();
    match String::from_utf8(twice) {
        Ok(text) => text,
        Err(invalid) => String::from_utf8_lossy(invalid.as_bytes()).into_owned(),
    }
}

fn unknown_operator(name: &str, position: usize) -> RqlError {
    error(position, format!("unknown operator `{}`", excerpt(name)))
}

/// Keeps messages readable when the offending text is very long.
fn excerpt(text: &str) -> String {
    const LIMIT: usize = 40;
    match text.char_indices().nth(LIMIT) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

fn error(position: usize, message: impl Into<String>) -> RqlError {
    RqlError {
        position,
        message: message.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn untyped(text: &str) -> Value {
        Value::Untyped(text.to_owned())
    }

    fn cmp(op: CompareOp, field: &str, value: Value) -> Expr {
        Expr::Compare {
            op,
            field: field.to_owned(),
            value,
        }
    }

    fn eq(field: &str, value: &str) -> Expr {
        cmp(CompareOp::Eq, field, untyped(value))
    }

    fn is_in(field: &str, values: &[&str], negated: bool) -> Expr {
        Expr::In {
            field: field.to_owned(),
            values: values.iter().map(|v| untyped(v)).collect(),
            negated,
        }
    }

    fn asc(field: &str) -> SortKey {
        SortKey {
            field: field.to_owned(),
            descending: false,
        }
    }

    fn desc(field: &str) -> SortKey {
        SortKey {
            field: field.to_owned(),
            descending: true,
        }
    }

    fn filter(expr: Expr) -> Query {
        Query {
            filter: Some(expr),
            ..Query::default()
        }
    }

    fn ok(input: &str) -> Query {
        parse(input).unwrap_or_else(|e| panic!("{input:?} failed: {e}"))
    }

    fn parses_to(input: &str, expected: Expr) {
        assert_eq!(ok(input), filter(expected), "{input:?}");
    }

    fn fails(input: &str, position: usize, message: &str) {
        let err = parse(input).expect_err(input);
        assert_eq!(
            (err.position, err.message.as_str()),
            (position, message),
            "{input:?}"
        );
    }

    const ID: &str = "5f3c2b1a0d9e8f7a6b5c4d3e";

    #[test]
    fn empty_input() {
        assert_eq!(ok(""), Query::default());
        assert_eq!(ok("?"), Query::default());
        assert_eq!(ok("&"), Query::default());
        assert_eq!(ok("?&&"), Query::default());
    }

    #[test]
    fn service_examples() {
        assert_eq!(
            ok(&format!("limit(1)&sort(-id)&eq(data.measurementId,{ID})")),
            Query {
                filter: Some(eq("data.measurementId", ID)),
                sort: vec![desc("id")],
                limit: Some(Limit {
                    count: 1,
                    offset: 0
                }),
                ..Query::default()
            }
        );
        assert_eq!(
            ok(&format!("data.measurementId={ID}&sort(-id)")),
            Query {
                filter: Some(eq("data.measurementId", ID)),
                sort: vec![desc("id")],
                ..Query::default()
            }
        );
        assert_eq!(
            ok(&format!(
                "eq(user_id,{ID})&out(trigger,MANUAL)&eq(status,COMPLETE)&sort(-creation_timestamp)&limit(20,40)"
            )),
            Query {
                filter: Some(Expr::And(vec![
                    eq("user_id", ID),
                    is_in("trigger", &["MANUAL"], true),
                    eq("status", "COMPLETE"),
                ])),
                sort: vec![desc("creation_timestamp")],
                limit: Some(Limit {
                    count: 20,
                    offset: 40
                }),
                ..Query::default()
            }
        );
        assert_eq!(
            ok(&format!("sort(-creation_timestamp)&user_id={ID}")),
            Query {
                filter: Some(eq("user_id", ID)),
                sort: vec![desc("creation_timestamp")],
                ..Query::default()
            }
        );
        assert_eq!(ok(&format!("?id={ID}")), filter(eq("id", ID)));
    }

    #[test]
    fn directives() {
        assert_eq!(
            ok("select(id,email)&skipCount()"),
            Query {
                select: Some(vec!["id".into(), "email".into()]),
                skip_count: true,
                ..Query::default()
            }
        );
        assert_eq!(
            ok("sort(+first_name,-id)").sort,
            vec![asc("first_name"), desc("id")]
        );
        assert_eq!(
            ok("sort(%2Bfirst_name,name)").sort,
            vec![asc("first_name"), asc("name")]
        );
        assert_eq!(ok("sort(%252Did,%2Dx)").sort, vec![desc("id"), desc("x")]);
        assert_eq!(
            ok("select(data.heartrate)").select,
            Some(vec!["data.heartrate".to_owned()])
        );
        assert_eq!(
            ok("limit(0)").limit,
            Some(Limit {
                count: 0,
                offset: 0
            })
        );
        assert_eq!(
            ok("limit(18446744073709551615,7)").limit,
            Some(Limit {
                count: u64::MAX,
                offset: 7
            })
        );
    }

    #[test]
    fn comparison_calls() {
        let ops = [
            ("eq", CompareOp::Eq),
            ("ne", CompareOp::Ne),
            ("gt", CompareOp::Gt),
            ("ge", CompareOp::Ge),
            ("lt", CompareOp::Lt),
            ("le", CompareOp::Le),
        ];
        for (name, op) in ops {
            parses_to(&format!("{name}(a,1)"), cmp(op, "a", untyped("1")));
        }
        parses_to("eq(a,)", eq("a", ""));
    }

    #[test]
    fn comparison_shorthands() {
        parses_to("a=1", eq("a", "1"));
        parses_to("a!=1", cmp(CompareOp::Ne, "a", untyped("1")));
        parses_to("a>1", cmp(CompareOp::Gt, "a", untyped("1")));
        parses_to("a>=1", cmp(CompareOp::Ge, "a", untyped("1")));
        parses_to("a<1", cmp(CompareOp::Lt, "a", untyped("1")));
        parses_to("a<=1", cmp(CompareOp::Le, "a", untyped("1")));
        parses_to("a=", eq("a", ""));
        parses_to("a=hi!", eq("a", "hi!"));
    }

    #[test]
    fn fiql_forms() {
        parses_to("a=gt=5", cmp(CompareOp::Gt, "a", untyped("5")));
        parses_to("a=ne=5", cmp(CompareOp::Ne, "a", untyped("5")));
        parses_to("a=le=number:5", cmp(CompareOp::Le, "a", Value::Number(5.0)));
        parses_to("a=in=(x,y)", is_in("a", &["x", "y"], false));
        parses_to("a=out=(x)", is_in("a", &["x"], true));
        parses_to("a=in=x", is_in("a", &["x"], false));
        parses_to("a=in=()", is_in("a", &[], false));
        parses_to(
            "a=like=*x",
            Expr::Like {
                field: "a".into(),
                pattern: untyped("*x"),
            },
        );
        parses_to(
            "a=excludes=x",
            Expr::Contains {
                field: "a".into(),
                value: untyped("x"),
                negated: true,
            },
        );
    }

    #[test]
    fn in_and_out() {
        parses_to("in(id,(a,b,c))", is_in("id", &["a", "b", "c"], false));
        parses_to(
            "out(trigger,(MANUAL,PRESCRIPTION_ENDED))",
            is_in("trigger", &["MANUAL", "PRESCRIPTION_ENDED"], true),
        );
        parses_to("in(id,a,b,c)", is_in("id", &["a", "b", "c"], false));
        parses_to("in(id,a)", is_in("id", &["a"], false));
        parses_to("in(id,())", is_in("id", &[], false));
        parses_to("in(id,)", is_in("id", &[""], false));
        parses_to("in(id,(,))", is_in("id", &["", ""], false));
        parses_to(
            "in(n,(number:1,string:x))",
            Expr::In {
                field: "n".into(),
                values: vec![Value::Number(1.0), Value::String("x".into())],
                negated: false,
            },
        );
    }

    #[test]
    fn like_contains_excludes() {
        parses_to(
            "like(email,*example.com)",
            Expr::Like {
                field: "email".into(),
                pattern: untyped("*example.com"),
            },
        );
        parses_to(
            "contains(data.tags,x)",
            Expr::Contains {
                field: "data.tags".into(),
                value: untyped("x"),
                negated: false,
            },
        );
        parses_to(
            "excludes(data.tags,x)",
            Expr::Contains {
                field: "data.tags".into(),
                value: untyped("x"),
                negated: true,
            },
        );
    }

    #[test]
    fn logic() {
        parses_to(
            "and(eq(a,1),or(eq(b,2),eq(c,3)))",
            Expr::And(vec![
                eq("a", "1"),
                Expr::Or(vec![eq("b", "2"), eq("c", "3")]),
            ]),
        );
        parses_to(
            "(a=1|b=2)&c=3",
            Expr::And(vec![
                Expr::Or(vec![eq("a", "1"), eq("b", "2")]),
                eq("c", "3"),
            ]),
        );
        parses_to("a=1|b=2", Expr::Or(vec![eq("a", "1"), eq("b", "2")]));
        parses_to(
            "a=1&b=2|c=3",
            Expr::Or(vec![
                Expr::And(vec![eq("a", "1"), eq("b", "2")]),
                eq("c", "3"),
            ]),
        );
        parses_to(
            "a=1|b=2&c=3",
            Expr::Or(vec![
                eq("a", "1"),
                Expr::And(vec![eq("b", "2"), eq("c", "3")]),
            ]),
        );
        parses_to("and(a=1,b=2)", Expr::And(vec![eq("a", "1"), eq("b", "2")]));
        parses_to("or(a=1|b=2)", Expr::Or(vec![eq("a", "1"), eq("b", "2")]));
        parses_to("a=1&&b=2&", Expr::And(vec![eq("a", "1"), eq("b", "2")]));
    }

    #[test]
    fn groups_are_flattened_and_unwrapped() {
        parses_to("and(a=1)", eq("a", "1"));
        parses_to("((a=1))", eq("a", "1"));
        parses_to(
            "and(and(a=1,b=2),c=3)&(d=4&e=5)",
            Expr::And(vec![
                eq("a", "1"),
                eq("b", "2"),
                eq("c", "3"),
                eq("d", "4"),
                eq("e", "5"),
            ]),
        );
        parses_to(
            "or(or(a=1),b=2)|(c=3|d=4)",
            Expr::Or(vec![eq("a", "1"), eq("b", "2"), eq("c", "3"), eq("d", "4")]),
        );
        parses_to(
            "or(and(a=1,b=2))&c=3",
            Expr::And(vec![eq("a", "1"), eq("b", "2"), eq("c", "3")]),
        );
    }

    #[test]
    fn typed_values() {
        let date = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
        parses_to(
            "gt(creation_timestamp,2026-11-22T10:00:00.000Z)",
            cmp(
                CompareOp::Gt,
                "creation_timestamp",
                untyped("2026-11-22T10:00:00.000Z"),
            ),
        );
        parses_to(
            "ge(heartrate,number:60)",
            cmp(CompareOp::Ge, "heartrate", Value::Number(60.0)),
        );
        parses_to("eq(x,number:-1.5e3)", eq_value("x", Value::Number(-1500.0)));
        parses_to(
            "eq(activation,boolean:true)",
            eq_value("activation", Value::Boolean(true)),
        );
        parses_to(
            "eq(activation,boolean:false)",
            eq_value("activation", Value::Boolean(false)),
        );
        parses_to(
            "eq(email,string:abc)",
            eq_value("email", Value::String("abc".into())),
        );
        parses_to(
            "eq(email,string:)",
            eq_value("email", Value::String(String::new())),
        );
        parses_to(
            "eq(s,string:number:1)",
            eq_value("s", Value::String("number:1".into())),
        );
        parses_to(
            "lt(creation_timestamp,epoch:1763805600000)",
            cmp(
                CompareOp::Lt,
                "creation_timestamp",
                Value::Epoch(1_763_805_600_000),
            ),
        );
        parses_to("eq(t,epoch:-5)", eq_value("t", Value::Epoch(-5)));
        parses_to(
            "gt(creationTimestamp,date:2026-11-22)",
            cmp(
                CompareOp::Gt,
                "creationTimestamp",
                Value::Date(Utc.with_ymd_and_hms(2026, 11, 22, 0, 0, 0).unwrap()),
            ),
        );
        parses_to(
            "eq(d,date:2026-11-22T10:00:00.000Z)",
            eq_value("d", Value::Date(date)),
        );
        parses_to(
            "eq(d,date:2026-11-22T11:00:00%2B01:00)",
            eq_value("d", Value::Date(date)),
        );
        parses_to(
            "eq(d,date:2026-11-22T10:00:00)",
            eq_value("d", Value::Date(date)),
        );
        parses_to("eq(d,unknown:x)", eq("d", "unknown:x"));
        parses_to("eq(d,string%3Ax)", eq("d", "string:x"));
        parses_to("eq(d,string%253Ax)", eq("d", "string:x"));
    }

    fn eq_value(field: &str, value: Value) -> Expr {
        cmp(CompareOp::Eq, field, value)
    }

    #[test]
    fn malformed_typed_values() {
        fails(
            "eq(a,number:abc)",
            5,
            "invalid number value `abc`: expected a finite number",
        );
        fails(
            "eq(a,number:inf)",
            5,
            "invalid number value `inf`: expected a finite number",
        );
        fails(
            "eq(a,number:1e999)",
            5,
            "invalid number value `1e999`: expected a finite number",
        );
        fails(
            "eq(a,number:)",
            5,
            "invalid number value ``: expected a finite number",
        );
        fails(
            "eq(a,boolean:yes)",
            5,
            "invalid boolean value `yes`: expected `true` or `false`",
        );
        fails(
            "a=epoch:1.5",
            2,
            "invalid epoch value `1.5`: expected an integer number of milliseconds",
        );
        let date = "expected an RFC 3339 date-time or a YYYY-MM-DD date, years 0000 to 9999";
        fails(
            "eq(a,date:notadate)",
            5,
            &format!("invalid date value `notadate`: {date}"),
        );
        fails(
            "eq(a,date:9999-12-31T23:00:00-05:00)",
            5,
            &format!("invalid date value `9999-12-31T23:00:00-05:00`: {date}"),
        );
    }

    #[test]
    fn double_decoding() {
        parses_to(
            "eq(email,john%2540example.com)",
            eq("email", "john@example.com"),
        );
        parses_to(
            "eq(email,john%40example.com)",
            eq("email", "john@example.com"),
        );
        parses_to("eq(name,J%25C3%25BCrgen)", eq("name", "Jürgen"));
        parses_to("eq(name,J%C3%BCrgen)", eq("name", "Jürgen"));
        parses_to("eq(name,J%25C3%BCrgen)", eq("name", "Jürgen"));
        parses_to("eq(v,a%2Cb%2528c%2529)", eq("v", "a,b(c)"));
        parses_to("eq(v,100%25)", eq("v", "100%"));
        parses_to("eq(v,%zz%)", eq("v", "%zz%"));
        parses_to("eq(v,%FF)", eq("v", "\u{FFFD}"));
        parses_to("eq(v,a+b)", eq("v", "a+b"));
        parses_to("eq(v,é)", eq("v", "é"));
        parses_to("data%252Eid=1", eq("data.id", "1"));
    }

    #[test]
    fn errors_with_positions() {
        fails("eq(a,1", 6, "expected `)`");
        fails("(a=1", 4, "expected `)`");
        fails("(a=1,b=2)", 4, "expected `)`");
        fails("a=1)", 3, "expected `&`, `|` or end of query");
        fails(")", 0, "expected a condition");
        fails("foo(a,1)", 0, "unknown operator `foo`");
        fails("a=1&Eq(a,1)", 4, "unknown operator `Eq`");
        fails("a=foo=1", 2, "unknown operator `foo`");
        fails(
            "a=and=1",
            2,
            "`and` cannot be used in the `field=operator=value` form",
        );
        fails("eq(a)", 0, "`eq` takes a field and a value");
        fails("x=1&eq()", 4, "`eq` takes a field and a value");
        fails("eq(a,b,c)", 0, "`eq` takes a field and a value");
        fails("eq(a,(b))", 0, "`eq` takes a field and a value");
        fails("like(a,b,c)", 0, "`like` takes a field and a pattern");
        fails("contains(a)", 0, "`contains` takes a field and a value");
        fails("excludes(a,b,c)", 0, "`excludes` takes a field and a value");
        fails("in(a)", 0, "`in` takes a field and a list of values");
        fails(
            "out(a,(b),c)",
            0,
            "`out` takes a field and a list of values",
        );
        fails("in(a,b,(c))", 0, "`in` takes a field and a list of values");
        fails("in(a,((b)))", 6, "lists cannot be nested");
        fails("in(a,(b", 7, "expected `)`");
        fails("in(a,(b&c))", 7, "expected `,` or `)`");
        fails("eq(a,b=c)", 6, "expected `,` or `)`");
        fails("eq(a,=)", 5, "expected a value");
        fails("and()", 0, "`and` takes one or more conditions");
        fails("or(a=1,)", 7, "expected a condition");
        fails("and(a=1,b=2", 11, "expected `)`");
        fails("and(a=1(b))", 7, "expected `&`, `|`, `,` or `)`");
        fails("and(a=1 b=2)", 6, "unknown operator `1 b`");
        fails("a", 1, "expected `(` or a comparison operator after `a`");
        fails(
            "a=1&b",
            5,
            "expected `(` or a comparison operator after `b`",
        );
        fails("eq(a,1)x", 7, "expected `&`, `|` or end of query");
        fails("eq(a,1)(", 7, "expected `&`, `|` or end of query");
        fails("a=1|", 4, "expected a condition");
        fails("|a=1", 0, "expected a condition");
        fails("a=1||b=2", 4, "expected a condition");
        fails("(a=1&&b=2)", 5, "expected a condition");
        fails("()", 1, "expected a condition");
        fails("=1", 0, "expected a condition");
    }

    #[test]
    fn field_name_errors() {
        let rule = "use letters, digits, `_` and `.`, starting with a letter or `_`";
        fails("eq(,1)", 3, "expected a field name");
        fails("1a=1", 0, &format!("invalid field name `1a`: {rule}"));
        fails(
            "?a%20b=1",
            1,
            &format!("invalid field name `a%20b`: {rule}"),
        );
        fails("eq(a-b,1)", 3, &format!("invalid field name `a-b`: {rule}"));
        fails("sort(-)", 5, "expected a field name");
        fails("sort(--a)", 5, &format!("invalid field name `--a`: {rule}"));
        fails(
            "select(a,b c)",
            9,
            &format!("invalid field name `b c`: {rule}"),
        );
        assert_eq!(ok("_x.y_2=1").filter, Some(eq("_x.y_2", "1")));
    }

    #[test]
    fn directive_errors() {
        fails("sort(a)&sort(b)", 8, "`sort` given twice");
        fails("limit(1)&limit(2)", 9, "`limit` given twice");
        fails("select(a)&select(b)", 10, "`select` given twice");
        fails("skipCount()&skipCount()", 12, "`skipCount` given twice");
        let nested = "is only allowed at the top level of the query, joined with `&`";
        fails("(sort(a))", 1, &format!("`sort` {nested}"));
        fails("and(a=1,limit(1))", 8, &format!("`limit` {nested}"));
        fails("or(select(a))", 3, &format!("`select` {nested}"));
        let or_side = "must apply to the whole query, not to one side of `|`";
        fails("a=1|b=2&sort(a)", 8, &format!("`sort` {or_side}"));
        fails("sort(a)|b=1", 0, &format!("`sort` {or_side}"));
        fails("a=1&skipCount()|b=1", 4, &format!("`skipCount` {or_side}"));
        fails(
            "sort()",
            0,
            "`sort` takes one or more fields, each optionally prefixed with `+` or `-`",
        );
        fails(
            "sort((a))",
            0,
            "`sort` takes one or more fields, each optionally prefixed with `+` or `-`",
        );
        fails("select()", 0, "`select` takes one or more fields");
        fails("skipCount(a)", 0, "`skipCount` takes no arguments");
        fails("limit()", 0, "`limit` takes a count and an optional offset");
        fails(
            "limit(1,2,3)",
            0,
            "`limit` takes a count and an optional offset",
        );
        fails(
            "limit(-1)",
            6,
            "expected a non-negative integer, found `-1`",
        );
        fails(
            "limit(%2B1)",
            6,
            "expected a non-negative integer, found `+1`",
        );
        fails(
            "limit(1,x)",
            8,
            "expected a non-negative integer, found `x`",
        );
        fails("limit(1,)", 8, "expected a non-negative integer, found ``");
        fails(
            "limit(18446744073709551616)",
            6,
            "expected a non-negative integer, found `18446744073709551616`",
        );
        fails(
            "skipCount",
            9,
            "expected `(` or a comparison operator after `skipCount`",
        );
    }

    #[test]
    fn nesting_limit() {
        let nested = |depth: usize, open: &str| {
            let close = ")".repeat(open.matches('(').count());
            format!("{}a=1{}", open.repeat(depth), close.repeat(depth))
        };
        assert!(parse(&nested(MAX_DEPTH, "(")).is_ok());
        assert!(parse(&nested(MAX_DEPTH, "and(")).is_ok());
        assert!(parse(&nested(MAX_DEPTH / 2, "or((")).is_ok());
        fails(
            &nested(MAX_DEPTH / 2 + 1, "or(("),
            4 * (MAX_DEPTH / 2) + 2,
            "nesting deeper than 32 levels",
        );
        fails(
            &nested(MAX_DEPTH + 1, "("),
            MAX_DEPTH,
            "nesting deeper than 32 levels",
        );
        fails(
            &nested(MAX_DEPTH + 1, "and("),
            4 * MAX_DEPTH + 3,
            "nesting deeper than 32 levels",
        );
        let deep = "(".repeat(100_000);
        fails(&deep, MAX_DEPTH, "nesting deeper than 32 levels");
    }

    #[test]
    fn term_limit() {
        let conditions = |n: usize| vec!["a=1"; n].join("&");
        assert!(parse(&conditions(MAX_TERMS)).is_ok());
        let message = "too many terms: a query may hold at most 100 (conditions, sort keys and selected fields)";
        fails(&conditions(MAX_TERMS + 1), 4 * MAX_TERMS, message);
        // Nested conditions count as well as top-level ones, in either form.
        let nested = format!("or({})", vec!["eq(a,1)"; MAX_TERMS + 1].join(","));
        fails(&nested, 3 + 8 * MAX_TERMS, message);
        let grouped = format!("({})", vec!["a=1"; MAX_TERMS + 1].join("|"));
        fails(&grouped, 1 + 4 * MAX_TERMS, message);
        // Sort keys and selected fields are terms too.
        let fields = |n: usize| vec!["a"; n].join(",");
        let query = format!("{}&sort({})", conditions(MAX_TERMS - 2), fields(2));
        assert!(parse(&query).is_ok());
        let query = format!("{}&select({})", conditions(MAX_TERMS - 2), fields(3));
        fails(&query, 4 * (MAX_TERMS - 2), message);
        let query = format!("sort({})", fields(MAX_TERMS + 1));
        fails(&query, 0, message);
    }

    #[test]
    fn list_limits() {
        let values = |n: usize| vec!["1"; n].join(",");
        assert!(parse(&format!("in(a,({}))", values(MAX_LIST_VALUES))).is_ok());
        assert!(parse(&format!("out(a,{})", values(MAX_LIST_VALUES))).is_ok());
        assert!(parse(&format!("a=in=({})", values(MAX_LIST_VALUES))).is_ok());
        let at = |prefix: &str| prefix.len() + 2 * MAX_LIST_VALUES;
        fails(
            &format!("in(a,({}))", values(MAX_LIST_VALUES + 1)),
            at("in(a,("),
            "too many values: `in` takes at most 1000",
        );
        fails(
            &format!("out(a,{})", values(MAX_LIST_VALUES + 1)),
            at("out(a,"),
            "too many values: `out` takes at most 1000",
        );
        fails(
            &format!("a=out=({})", values(MAX_LIST_VALUES + 1)),
            at("a=out=("),
            "too many values: `out` takes at most 1000",
        );
        // Lists within their own bound may still pass the query's.
        let lists = MAX_QUERY_VALUES / MAX_LIST_VALUES;
        let full = format!("in(a,({}))", values(MAX_LIST_VALUES));
        assert!(parse(&vec![full.as_str(); lists].join("&")).is_ok());
        let over = format!("{}&in(a,1)", vec![full.as_str(); lists].join("&"));
        fails(
            &over,
            over.len() - 2,
            "too many values: the `in` and `out` lists of a query may hold at most 10000 together",
        );
    }

    #[test]
    fn offset_limit() {
        assert_eq!(
            ok("limit(10,100000)").limit,
            Some(Limit {
                count: 10,
                offset: MAX_OFFSET
            })
        );
        let message = "offset too large: `limit` takes an offset of at most 100000";
        fails("limit(10,100001)", 9, message);
        fails("a=1&limit(5,18446744073709551615)", 12, message);
        // The count is clamped by the store, not refused.
        assert!(parse("limit(18446744073709551615)").is_ok());
    }

    #[test]
    fn odd_input_does_not_panic() {
        for input in [
            "%",
            "%%",
            "%E2%82",
            "€=€",
            "a=€&€",
            "eq(€,1)",
            "!",
            "!=",
            "a!b=1",
            "<>",
            "a<>b",
        ] {
            let _ = parse(input);
        }
        let long = "x".repeat(500);
        let err = parse(&format!("{long}(1)")).unwrap_err();
        assert_eq!(
            err.message,
            format!("unknown operator `{}…`", "x".repeat(40))
        );
        let err = parse("€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€€(1)").unwrap_err();
        assert!(err.message.ends_with("…`"));
    }

    #[test]
    fn error_display() {
        let err = parse("eq(a)").unwrap_err();
        assert_eq!(
            err.to_string(),
            "at position 0: `eq` takes a field and a value"
        );
        let boxed: Box<dyn std::error::Error> = Box::new(err);
        assert!(boxed.to_string().starts_with("at position 0"));
    }
}
