//! Printing of queries as canonical RQL.

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use super::ast::{Expr, Query, Value, format_date, format_number};

/// Left unencoded: unreserved URL characters and the `like` wildcard. All
/// structural characters, `%`, `:` and `+` are encoded, which is what makes
/// every printed value read back unchanged.
const KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'*');

/// Prints `query` as canonical RQL, without a leading `?`.
///
/// Filter terms come first, then `sort(...)`, `limit(count,offset)`,
/// `select(...)` and `skipCount()`, joined by `&`. Field names and values are
/// percent-encoded twice, mirroring [`parse`](super::parse()), so that
/// `parse(&print(&q))` gives back `q` for every query in the shape `parse`
/// produces. Empty `And`/`Or` groups and an empty `select` have no RQL form
/// that parses; they print as `and()`, `or()` and `select()`.
pub fn print(query: &Query) -> String {
    let mut parts: Vec<String> = Vec::new();
    match &query.filter {
        Some(Expr::And(terms)) if !terms.is_empty() => parts.extend(terms.iter().map(expr)),
        Some(filter) => parts.push(expr(filter)),
        None => {}
    }
    if !query.sort.is_empty() {
        let keys: Vec<String> = query
            .sort
            .iter()
            .map(|key| {
                let sign = if key.descending { '-' } else { '+' };
                format!("{sign}{}", encode(&key.field))
            })
            .collect();
        parts.push(format!("sort({})", keys.join(",")));
    }
    if let Some(limit) = query.limit {
        parts.push(format!("limit({},{})", limit.count, limit.offset));
    }
    if let Some(fields) = &query.select {
        let fields: Vec<String> = fields.iter().map(|field| encode(field)).collect();
        parts.push(format!("select({})", fields.join(",")));
    }
    if query.skip_count {
        parts.push("skipCount()".to_owned());
    }
    parts.join("&")
}

fn expr(expr: &Expr) -> String {
    match expr {
        Expr::And(terms) => group("and", terms),
        Expr::Or(terms) => group("or", terms),
        Expr::Compare {
            op,
            field,
            value: v,
        } => {
            format!("{}({},{})", op.as_str(), encode(field), value(v))
        }
        Expr::In {
            field,
            values,
            negated,
        } => {
            let name = if *negated { "out" } else { "in" };
            let field = encode(field);
            match values.as_slice() {
                // `(x)` with an empty `x` reads back as the empty list.
                [Value::Untyped(text)] if text.is_empty() => format!("{name}({field},)"),
                _ => {
                    let values: Vec<String> = values.iter().map(value).collect();
                    format!("{name}({field},({}))", values.join(","))
                }
            }
        }
        Expr::Like { field, pattern } => format!("like({},{})", encode(field), value(pattern)),
        Expr::Contains {
            field,
            value: v,
            negated,
        } => {
            let name = if *negated { "excludes" } else { "contains" };
            format!("{name}({},{})", encode(field), value(v))
        }
    }
}

fn group(name: &str, terms: &[Expr]) -> String {
    let terms: Vec<String> = terms.iter().map(expr).collect();
    format!("{name}({})", terms.join(","))
}

fn value(value: &Value) -> String {
    match value {
        Value::Untyped(text) => encode(text),
        Value::String(text) => format!("string:{}", encode(text)),
        // Numbers and dates only contain characters that need no encoding.
        Value::Number(number) => format!("number:{}", format_number(*number)),
        Value::Boolean(flag) => format!("boolean:{flag}"),
        Value::Date(date) => format!("date:{}", format_date(date)),
        Value::Epoch(millis) => format!("epoch:{millis}"),
    }
}

fn encode(text: &str) -> String {
    let once = utf8_percent_encode(text, KEEP).to_string();
    utf8_percent_encode(&once, KEEP).to_string()
}

#[cfg(test)]
mod tests {
    use super::super::{CompareOp, Limit, SortKey, parse};
    use super::*;
    use chrono::{TimeZone, Utc};

    fn eq(field: &str, value: Value) -> Expr {
        Expr::Compare {
            op: CompareOp::Eq,
            field: field.to_owned(),
            value,
        }
    }

    fn untyped(text: &str) -> Value {
        Value::Untyped(text.to_owned())
    }

    fn filter(expr: Expr) -> Query {
        Query {
            filter: Some(expr),
            ..Query::default()
        }
    }

    #[test]
    fn empty_query() {
        assert_eq!(print(&Query::default()), "");
    }

    #[test]
    fn full_query_in_canonical_order() {
        let query = Query {
            filter: Some(Expr::And(vec![
                eq("user_id", untyped("5f3c")),
                Expr::In {
                    field: "trigger".into(),
                    values: vec![untyped("MANUAL")],
                    negated: true,
                },
                Expr::Or(vec![
                    eq("a", untyped("1")),
                    Expr::And(vec![eq("b", untyped("2")), eq("c", untyped("3"))]),
                ]),
            ])),
            sort: vec![
                SortKey {
                    field: "first_name".into(),
                    descending: false,
                },
                SortKey {
                    field: "id".into(),
                    descending: true,
                },
            ],
            limit: Some(Limit {
                count: 20,
                offset: 0,
            }),
            select: Some(vec!["id".into(), "data.email".into()]),
            skip_count: true,
        };
        assert_eq!(
            print(&query),
            "eq(user_id,5f3c)&out(trigger,(MANUAL))&or(eq(a,1),and(eq(b,2),eq(c,3)))\
             &sort(+first_name,-id)&limit(20,0)&select(id,data.email)&skipCount()"
        );
    }

    #[test]
    fn each_operator() {
        let ops = [
            (CompareOp::Eq, "eq"),
            (CompareOp::Ne, "ne"),
            (CompareOp::Gt, "gt"),
            (CompareOp::Ge, "ge"),
            (CompareOp::Lt, "lt"),
            (CompareOp::Le, "le"),
        ];
        for (op, name) in ops {
            let expr = Expr::Compare {
                op,
                field: "f".into(),
                value: untyped("v"),
            };
            assert_eq!(print(&filter(expr)), format!("{name}(f,v)"));
        }
        let cases = [
            (
                Expr::In {
                    field: "f".into(),
                    values: vec![untyped("a"), untyped("b")],
                    negated: false,
                },
                "in(f,(a,b))",
            ),
            (
                Expr::In {
                    field: "f".into(),
                    values: vec![],
                    negated: false,
                },
                "in(f,())",
            ),
            (
                Expr::In {
                    field: "f".into(),
                    values: vec![untyped("")],
                    negated: true,
                },
                "out(f,)",
            ),
            (
                Expr::Like {
                    field: "email".into(),
                    pattern: untyped("*@example.com"),
                },
                "like(email,*%2540example.com)",
            ),
            (
                Expr::Contains {
                    field: "tags".into(),
                    value: untyped("x"),
                    negated: false,
                },
                "contains(tags,x)",
            ),
            (
                Expr::Contains {
                    field: "tags".into(),
                    value: untyped("x"),
                    negated: true,
                },
                "excludes(tags,x)",
            ),
            (
                Expr::Or(vec![eq("a", untyped("1")), eq("b", untyped("2"))]),
                "or(eq(a,1),eq(b,2))",
            ),
        ];
        for (expr, expected) in cases {
            let query = filter(expr);
            assert_eq!(print(&query), expected);
            assert_eq!(parse(expected), Ok(query));
        }
    }

    #[test]
    fn typed_values() {
        let date = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
        let cases = [
            (Value::String("a b".into()), "eq(f,string:a%2520b)"),
            (Value::Number(60.0), "eq(f,number:60)"),
            (Value::Number(-0.125), "eq(f,number:-0.125)"),
            (Value::Number(1e300), "eq(f,number:1e300)"),
            (Value::Boolean(true), "eq(f,boolean:true)"),
            (Value::Date(date), "eq(f,date:2026-11-22T10:00:00.000Z)"),
            (Value::Epoch(1_763_805_600_000), "eq(f,epoch:1763805600000)"),
        ];
        for (value, expected) in cases {
            let query = filter(eq("f", value));
            assert_eq!(print(&query), expected);
            assert_eq!(parse(expected), Ok(query));
        }
    }

    #[test]
    fn values_are_encoded_twice() {
        let cases = [
            ("john@example.com", "eq(f,john%2540example.com)"),
            ("string:x", "eq(f,string%253Ax)"),
            (
                "a,b(c)&d|e=f!g<h>",
                "eq(f,a%252Cb%2528c%2529%2526d%257Ce%253Df%2521g%253Ch%253E)",
            ),
            ("100%", "eq(f,100%2525)"),
            ("1+1", "eq(f,1%252B1)"),
            ("Jürgen", "eq(f,J%25C3%25BCrgen)"),
            ("-_.~*", "eq(f,-_.~*)"),
        ];
        for (text, expected) in cases {
            let query = filter(eq("f", untyped(text)));
            assert_eq!(print(&query), expected);
            assert_eq!(parse(expected), Ok(query));
        }
    }
}
