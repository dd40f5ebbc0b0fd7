//! Property tests tying the parser and the printer together.

use chrono::DateTime;
use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

fn field() -> impl Strategy<Value = String> {
    "[A-Za-z_][A-Za-z0-9_.]{0,12}"
}

/// Text biased towards the characters that matter to RQL and percent-encoding.
fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".*",
        "[%(),&|=:!<>+* a-zA-Z0-9.~_-]{0,12}",
        "(string|number|boolean|date|epoch):[%a-z0-9:]{0,6}",
        "(%[0-9A-Fa-f]{2}|%|[a-zé€])*",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    // Years 1900 to 2200, at millisecond precision.
    let millis = -2_208_988_800_000_i64..7_258_118_400_000;
    prop_oneof![
        text().prop_map(Value::Untyped),
        text().prop_map(Value::String),
        any::<f64>()
            .prop_filter("finite", |n| n.is_finite())
            .prop_map(Value::Number),
        any::<bool>().prop_map(Value::Boolean),
        millis.prop_map(|ms| Value::Date(DateTime::from_timestamp_millis(ms).unwrap())),
        any::<i64>().prop_map(Value::Epoch),
    ]
}

fn compare_op() -> impl Strategy<Value = CompareOp> {
    prop_oneof![
        Just(CompareOp::Eq),
        Just(CompareOp::Ne),
        Just(CompareOp::Gt),
        Just(CompareOp::Ge),
        Just(CompareOp::Lt),
        Just(CompareOp::Le),
    ]
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        (compare_op(), field(), value()).prop_map(|(op, field, value)| Expr::Compare {
            op,
            field,
            value
        }),
        (field(), vec(value(), 0..4), any::<bool>()).prop_map(|(field, values, negated)| {
            Expr::In {
                field,
                values,
                negated,
            }
        }),
        (field(), value()).prop_map(|(field, pattern)| Expr::Like { field, pattern }),
        (field(), value(), any::<bool>()).prop_map(|(field, value, negated)| {
            Expr::Contains {
                field,
                value,
                negated,
            }
        }),
    ]
}

/// Builds a group in the canonical shape: a child of the same kind is merged.
fn group(terms: Vec<Expr>, and: bool) -> Expr {
    let mut flat = Vec::new();
    for term in terms {
        match (and, term) {
            (true, Expr::And(inner)) | (false, Expr::Or(inner)) => flat.extend(inner),
            (_, term) => flat.push(term),
        }
    }
    if and { Expr::And(flat) } else { Expr::Or(flat) }
}

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(4, 48, 4, |inner| {
        (vec(inner, 2..5), any::<bool>()).prop_map(|(terms, and)| group(terms, and))
    })
}

fn sort_key() -> impl Strategy<Value = SortKey> {
    (field(), any::<bool>()).prop_map(|(field, descending)| SortKey { field, descending })
}

fn query() -> impl Strategy<Value = Query> {
    (
        proptest::option::of(expr()),
        vec(sort_key(), 0..4),
        proptest::option::of((any::<u64>(), 0..=MAX_OFFSET)),
        proptest::option::of(vec(field(), 1..4)),
        any::<bool>(),
    )
        .prop_map(|(filter, sort, limit, select, skip_count)| Query {
            filter,
            sort,
            limit: limit.map(|(count, offset)| Limit { count, offset }),
            select,
            skip_count,
        })
}

/// The terms of a query as [`MAX_TERMS`] counts them.
fn terms(query: &Query) -> usize {
    fn conditions(expr: &Expr) -> usize {
        match expr {
            Expr::And(parts) | Expr::Or(parts) => parts.iter().map(conditions).sum(),
            _ => 1,
        }
    }
    query.filter.as_ref().map_or(0, conditions)
        + query.sort.len()
        + query.select.as_ref().map_or(0, Vec::len)
}

/// Query strings built from the grammar with messy raw tokens, so that a
/// good share of them parse and exercise the printer.
fn rql_text() -> impl Strategy<Value = String> {
    let raw_field = || prop_oneof!["[a-z_][a-z0-9_.]{0,5}", "[a-z]%(25)?5F[a-z]"];
    let raw_value = || {
        prop_oneof![
            "[a-zA-Z0-9%.+*~é!-]{0,8}",
            "(string|number|boolean|date|epoch):[0-9a-z%.:+-]{0,6}",
            Just("number:-1.5e3".to_owned()),
            Just("boolean:false".to_owned()),
            Just("epoch:-3".to_owned()),
            Just("date:2026-11-22".to_owned()),
            Just("date:2026-11-22T10:00:00.123456%2B01:00".to_owned()),
        ]
    };
    let call = prop_oneof![
        Just("eq"),
        Just("ne"),
        Just("gt"),
        Just("ge"),
        Just("lt"),
        Just("le"),
        Just("like"),
        Just("contains"),
        Just("excludes"),
    ];
    let symbol = prop_oneof![
        Just("="),
        Just("!="),
        Just("<"),
        Just("<="),
        Just(">"),
        Just(">="),
        Just("=ge="),
        Just("=like="),
        Just("=in="),
    ];
    let list_op = prop_oneof![Just("in"), Just("out")];
    let leaf = prop_oneof![
        (call, raw_field(), raw_value()).prop_map(|(op, f, v)| format!("{op}({f},{v})")),
        (raw_field(), symbol, raw_value()).prop_map(|(f, s, v)| format!("{f}{s}{v}")),
        (list_op.clone(), raw_field(), vec(raw_value(), 0..3))
            .prop_map(|(op, f, vs)| format!("{op}({f},({}))", vs.join(","))),
        (list_op, raw_field(), vec(raw_value(), 1..3))
            .prop_map(|(op, f, vs)| format!("{op}({f},{})", vs.join(","))),
        (raw_field(), vec(raw_value(), 0..3))
            .prop_map(|(f, vs)| format!("{f}=out=({})", vs.join(","))),
    ];
    let expr = leaf.prop_recursive(4, 32, 4, |inner| {
        let shape = prop_oneof![
            Just(("and(", ",")),
            Just(("or(", ",")),
            Just(("(", "&")),
            Just(("(", "|")),
        ];
        (shape, vec(inner, 1..4))
            .prop_map(|((open, separator), terms)| format!("{open}{})", terms.join(separator)))
    });
    let term = prop_oneof![
        4 => expr,
        1 => Just("sort(-a,+b.c,d)".to_owned()),
        1 => Just("sort(%2Bx)".to_owned()),
        1 => Just("limit(5,10)".to_owned()),
        1 => Just("limit(7)".to_owned()),
        1 => Just("select(a,b.c)".to_owned()),
        1 => Just("skipCount()".to_owned()),
        1 => Just(String::new()),
    ];
    (vec(term, 0..6), any::<bool>(), any::<bool>()).prop_map(|(terms, question, or)| {
        let separator = if or { "|" } else { "&" };
        let joined = terms.join(separator);
        if question {
            format!("?{joined}")
        } else {
            joined
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn printed_queries_parse_back(query in query()) {
        let printed = print(&query);
        prop_assert!(
            printed.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.~*%:+(),&".contains(&b)),
            "unexpected character in {printed:?}"
        );
        if terms(&query) > MAX_TERMS {
            let refused = parse(&printed).map_err(|e| e.message);
            prop_assert!(
                refused.as_ref().is_err_and(|m| m.starts_with("too many terms")),
                "{:?}",
                refused
            );
        } else {
            prop_assert_eq!(parse(&printed), Ok(query), "printed as {:?}", printed);
        }
    }

    #[test]
    fn parse_never_panics_on_any_string(input in ".*") {
        let _ = parse(&input);
    }

    #[test]
    fn parse_never_panics_on_rql_characters(input in "[()=&|,!<>%a-z0-9:.+-]{0,60}") {
        let _ = parse(&input);
    }

    #[test]
    fn printing_a_parsed_query_is_stable(
        input in prop_oneof![rql_text(), "[()=&|,!<>%a-z0-9:.+-]{0,60}", ".*"]
    ) {
        if let Ok(query) = parse(&input) {
            let printed = print(&query);
            prop_assert_eq!(parse(&printed), Ok(query), "{:?} printed as {:?}", input, printed);
        }
    }
}

#[test]
fn grammar_strings_often_parse() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;

    let mut runner = TestRunner::deterministic();
    let strategy = rql_text();
    let parsed = (0..2000)
        .filter(|_| {
            let input = strategy.new_tree(&mut runner).unwrap().current();
            parse(&input).is_ok_and(|query| query != Query::default())
        })
        .count();
    // Guards the stability property against testing only rejected inputs.
    assert!(parsed > 400, "only {parsed} of 2000 parsed");
}
