//! The syntax tree of a parsed RQL query.

use chrono::{DateTime, SecondsFormat, Timelike, Utc};

/// A whole RQL query: an optional filter plus the top-level directives.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Query {
    /// The filter condition; `None` when the query has no filter terms.
    pub filter: Option<Expr>,
    /// Sort keys in priority order; empty when no `sort(...)` was given.
    pub sort: Vec<SortKey>,
    /// The page requested with `limit(count[,offset])`, if any.
    pub limit: Option<Limit>,
    /// Field names from `select(...)`, as written (dotted paths allowed).
    pub select: Option<Vec<String>>,
    /// Whether `skipCount()` was given.
    pub skip_count: bool,
}

/// One key of a `sort(...)` directive.
#[derive(Debug, Clone, PartialEq)]
pub struct SortKey {
    /// The field to sort by.
    pub field: String,
    /// `true` for a `-field` key, `false` for `+field` or a plain `field`.
    pub descending: bool,
}

/// The page requested by `limit(count[,offset])`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// Maximum number of items to return.
    pub count: u64,
    /// Number of items to skip; `0` for `limit(count)`.
    pub offset: u64,
}

/// A filter condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// All conditions must hold.
    And(Vec<Expr>),
    /// At least one condition must hold.
    Or(Vec<Expr>),
    /// `eq`, `ne`, `gt`, `ge`, `lt` or `le` of a field against a value.
    Compare {
        /// The comparison operator.
        op: CompareOp,
        /// The field compared.
        field: String,
        /// The value compared against.
        value: Value,
    },
    /// `in(field,(values...))`, or `out(...)` when `negated`.
    In {
        /// The field tested.
        field: String,
        /// The candidate values; may be empty.
        values: Vec<Value>,
        /// `true` for `out`.
        negated: bool,
    },
    /// `like(field,pattern)`, where `*` in the pattern matches any run of characters.
    Like {
        /// The field matched.
        field: String,
        /// The pattern, with `*` as the wildcard.
        pattern: Value,
    },
    /// `contains(field,value)` on an array field, or `excludes(...)` when `negated`.
    Contains {
        /// The array field tested.
        field: String,
        /// The element looked for.
        value: Value,
        /// `true` for `excludes`.
        negated: bool,
    },
}

/// The operator of an [`Expr::Compare`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `eq`: equal.
    Eq,
    /// `ne`: not equal.
    Ne,
    /// `gt`: greater than.
    Gt,
    /// `ge`: greater than or equal.
    Ge,
    /// `lt`: less than.
    Lt,
    /// `le`: less than or equal.
    Le,
}

/// A value in a condition.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A plain value, percent-decoded; the field's type decides how to read it.
    Untyped(String),
    /// `string:abc`.
    String(String),
    /// `number:12.5`; always finite.
    Number(f64),
    /// `boolean:true` or `boolean:false`.
    Boolean(bool),
    /// `date:2026-11-22T10:00:00.000Z` or `date:2026-11-22` (midnight UTC).
    Date(DateTime<Utc>),
    /// `epoch:1763805600000`: milliseconds since the Unix epoch.
    Epoch(i64),
}

impl CompareOp {
    /// The RQL name of the operator, e.g. `"eq"`.
    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Gt => "gt",
            CompareOp::Ge => "ge",
            CompareOp::Lt => "lt",
            CompareOp::Le => "le",
        }
    }
}

impl Value {
    /// The value as plain text, without any type prefix.
    ///
    /// Numbers use the shortest text that reads back as the same `f64`; dates
    /// use RFC 3339 in UTC with milliseconds (more digits only when the date
    /// carries sub-millisecond precision, so that no precision is lost).
    pub fn as_text(&self) -> String {
        match self {
            Value::Untyped(text) | Value::String(text) => text.clone(),
            Value::Number(number) => format_number(*number),
            Value::Boolean(flag) => flag.to_string(),
            Value::Date(date) => format_date(date),
            Value::Epoch(millis) => millis.to_string(),
        }
    }
}

impl Expr {
    /// Every field the condition refers to, in order of first appearance,
    /// each listed once.
    pub fn fields(&self) -> Vec<&str> {
        let mut fields: Vec<&str> = Vec::new();
        // An explicit stack keeps arbitrarily deep trees built in code from
        // exhausting the call stack.
        let mut pending = vec![self];
        while let Some(expr) = pending.pop() {
            let field = match expr {
                Expr::And(terms) | Expr::Or(terms) => {
                    pending.extend(terms.iter().rev());
                    continue;
                }
                Expr::Compare { field, .. }
                | Expr::In { field, .. }
                | Expr::Like { field, .. }
                | Expr::Contains { field, .. } => field.as_str(),
            };
            if !fields.contains(&field) {
                fields.push(field);
            }
        }
        fields
    }
}

/// Shortest decimal text that parses back to the same `f64`.
pub(crate) fn format_number(number: f64) -> String {
    // `{}` never uses an exponent, which makes 1e300 three hundred digits
    // long; `{:e}` is compact there but verbose for ordinary numbers.
    let plain = format!("{number}");
    let scientific = format!("{number:e}");
    if scientific.len() < plain.len() {
        scientific
    } else {
        plain
    }
}

/// RFC 3339 in UTC with a `Z`, milliseconds unless finer precision is present.
pub(crate) fn format_date(date: &DateTime<Utc>) -> String {
    let format = if date.nanosecond().is_multiple_of(1_000_000) {
        SecondsFormat::Millis
    } else {
        SecondsFormat::AutoSi
    };
    date.to_rfc3339_opts(format, true)
}

/// Queries built in code (the portal's lists), never written as text to be parsed again.
impl Query {
    /// Adds a condition: every condition added must hold.
    pub fn and(mut self, condition: Expr) -> Self {
        self.filter = Some(match self.filter.take() {
            None => condition,
            Some(Expr::And(mut all)) => {
                all.push(condition);
                Expr::And(all)
            }
            Some(first) => Expr::And(vec![first, condition]),
        });
        self
    }

    /// Sorts by `field` after the keys given so far.
    pub fn sort_by(mut self, field: &str, descending: bool) -> Self {
        self.sort.push(SortKey {
            field: field.to_owned(),
            descending,
        });
        self
    }

    /// The page of `count` items after `offset`.
    pub fn page(mut self, count: u64, offset: u64) -> Self {
        self.limit = Some(Limit { count, offset });
        self
    }

    /// Leaves out the total.
    pub fn without_count(mut self) -> Self {
        self.skip_count = true;
        self
    }
}

impl Expr {
    /// `field` compared with `value` by `op`.
    pub fn compare(op: CompareOp, field: &str, value: Value) -> Self {
        Expr::Compare {
            op,
            field: field.to_owned(),
            value,
        }
    }

    /// `eq(field,value)`, the value read by the field's type.
    pub fn eq(field: &str, value: &str) -> Self {
        Expr::compare(CompareOp::Eq, field, Value::Untyped(value.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn as_text_of_each_kind() {
        assert_eq!(Value::Untyped("a b".into()).as_text(), "a b");
        assert_eq!(Value::String("x:y".into()).as_text(), "x:y");
        assert_eq!(Value::Number(60.0).as_text(), "60");
        assert_eq!(Value::Number(12.5).as_text(), "12.5");
        assert_eq!(Value::Number(-0.25).as_text(), "-0.25");
        assert_eq!(Value::Number(1e300).as_text(), "1e300");
        assert_eq!(Value::Number(1.5e-10).as_text(), "1.5e-10");
        assert_eq!(Value::Boolean(true).as_text(), "true");
        assert_eq!(Value::Boolean(false).as_text(), "false");
        let date = Utc.with_ymd_and_hms(2026, 11, 22, 10, 0, 0).unwrap();
        assert_eq!(Value::Date(date).as_text(), "2026-11-22T10:00:00.000Z");
        let fine = date + chrono::Duration::microseconds(1);
        assert_eq!(Value::Date(fine).as_text(), "2026-11-22T10:00:00.000001Z");
        assert_eq!(Value::Epoch(-17).as_text(), "-17");
    }

    #[test]
    fn format_number_round_trips() {
        for number in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1.0 / 3.0,
            f64::MAX,
            f64::MIN_POSITIVE,
            5e-324,
        ] {
            let text = format_number(number);
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                number.to_bits(),
                "{text}"
            );
        }
    }

    #[test]
    fn compare_op_names() {
        let ops = [
            (CompareOp::Eq, "eq"),
            (CompareOp::Ne, "ne"),
            (CompareOp::Gt, "gt"),
            (CompareOp::Ge, "ge"),
            (CompareOp::Lt, "lt"),
            (CompareOp::Le, "le"),
        ];
        for (op, name) in ops {
            assert_eq!(op.as_str(), name);
        }
    }

    #[test]
    fn fields_lists_each_field_once_in_order() {
        let value = || Value::Untyped("1".into());
        let expr = Expr::And(vec![
            Expr::Compare {
                op: CompareOp::Eq,
                field: "b".into(),
                value: value(),
            },
            Expr::Or(vec![
                Expr::In {
                    field: "a".into(),
                    values: vec![],
                    negated: false,
                },
                Expr::Like {
                    field: "b".into(),
                    pattern: value(),
                },
            ]),
            Expr::Contains {
                field: "c.d".into(),
                value: value(),
                negated: true,
            },
        ]);
        assert_eq!(expr.fields(), vec!["b", "a", "c.d"]);
    }
}
