//! Translation of a parsed RQL query into SQL for one resource: the fields a client may filter,
//! sort and select are whitelisted here with their types, limits are clamped, and the caller's
//! visibility is ANDed in by the caller of [`Resource::translate`].

use sea_orm::sea_query::{
    Alias, Condition, Expr, ExprTrait, Func, LikeExpr, Order, Query as SqlQuery, SimpleExpr,
};

use crate::domain::id::Id;
use crate::domain::rql::{CompareOp, Expr as Filter, Query, Value};
use crate::domain::time::parse_millis;

/// Page size when the query names none.
pub const DEFAULT_LIMIT: u64 = 20;
/// Largest page; larger limits are clamped to it.
pub const MAX_LIMIT: u64 = 50;

/// How a queryable field is stored and compared.
#[derive(Debug, Clone, Copy)]
pub enum FieldKind {
    /// A 24-hex object id.
    Id,
    /// Text compared as stored.
    Text,
    /// Text stored in lower case (e-mail addresses); values are lower-cased too.
    LowerText,
    /// Text stored in upper case (language and country codes); values are upper-cased too.
    UpperText,
    /// A whole number.
    Integer,
    /// A decimal number.
    Number,
    /// `true` or `false`.
    Boolean,
    /// Epoch milliseconds; values may be epoch ms or ISO 8601.
    Millis,
    /// A list, kept in a link table: `owner` holds the resource id, `value` one element.
    List {
        table: &'static str,
        owner: &'static str,
        value: &'static str,
        element: ElementKind,
    },
}

/// Element type of a list field.
#[derive(Debug, Clone, Copy)]
pub enum ElementKind {
    Id,
    Text,
}

/// One queryable field of a resource.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// Name on the wire, as used in RQL.
    pub name: &'static str,
    /// Column in the resource's table.
    pub column: &'static str,
    pub kind: FieldKind,
}

/// A queryable resource: its table and whitelisted fields.
#[derive(Debug)]
pub struct Resource {
    pub table: &'static str,
    pub id_column: &'static str,
    pub fields: &'static [Field],
    /// Output fields that `select()` may keep besides the queryable ones; an entry ending in
    /// `.` admits every path below it (documents' verbatim `data.`).
    pub selectable: &'static [&'static str],
}

/// A query that does not fit the resource: unknown field, wrong value type, misuse of an operator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct QueryError(pub String);

/// What to fetch: the SQL condition, order and page, and what to show.
#[derive(Debug, Clone)]
pub struct ListSpec {
    pub condition: Condition,
    /// The sort keys asked for, then the id, which breaks ties and is never null.
    pub order: Vec<(SimpleExpr, Order)>,
    pub limit: u64,
    pub offset: u64,
    /// Wire field names to keep in each item, `id` always included.
    pub select: Option<Vec<String>>,
    pub skip_count: bool,
}

impl Resource {
    /// The field called `name`, or an error listing the queryable ones.
    pub fn field(&self, name: &str) -> Result<&Field, QueryError> {
        self.fields.iter().find(|f| f.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.fields.iter().map(|f| f.name).collect();
            QueryError(format!(
                "unknown field `{}` (queryable: {})",
                name.chars().take(64).collect::<String>(),
                known.join(", ")
            ))
        })
    }

    fn column(&self, column: &'static str) -> SimpleExpr {
        Expr::col((Alias::new(self.table), Alias::new(column)))
    }

    /// Translates `query` for this resource.
    pub fn translate(&self, query: &Query) -> Result<ListSpec, QueryError> {
        let condition = match &query.filter {
            Some(filter) => self.filter(filter)?,
            None => Condition::all(),
        };
        let mut order = Vec::with_capacity(query.sort.len() + 1);
        for key in &query.sort {
            let field = self.field(&key.field)?;
            if matches!(field.kind, FieldKind::List { .. }) {
                return Err(QueryError(format!(
                    "cannot sort on list field `{}`",
                    field.name
                )));
            }
            let direction = if key.descending {
                Order::Desc
            } else {
                Order::Asc
            };
            order.push((self.column(field.column), direction));
        }
        // Ties are broken by id so that pages never overlap or skip.
        let last_direction = order.last().map(|(_, o)| o.clone()).unwrap_or(Order::Asc);
        order.push((self.column(self.id_column), last_direction));
        let select = match &query.select {
            Some(fields) => {
                let mut names = vec!["id".to_owned()];
                for name in fields {
                    let extra = self.selectable.iter().any(|s| {
                        name == s
                            || (s.ends_with('.') && name.starts_with(s) && name.len() > s.len())
                    });
                    if !extra {
                        self.field(name)?;
                    }
                    if !names.contains(name) {
                        names.push(name.clone());
                    }
                }
                Some(names)
            }
            None => None,
        };
        let (limit, offset) = query
            .limit
            .map(|l| (Ord::min(l.count, MAX_LIMIT), l.offset))
            .unwrap_or((DEFAULT_LIMIT, 0));
        Ok(ListSpec {
            condition,
            order,
            limit,
            offset,
            select,
            skip_count: query.skip_count,
        })
    }

    fn filter(&self, filter: &Filter) -> Result<Condition, QueryError> {
        Ok(match filter {
            Filter::And(parts) => parts.iter().try_fold(Condition::all(), |c, p| {
                Ok::<_, QueryError>(c.add(self.filter(p)?))
            })?,
            Filter::Or(parts) => parts.iter().try_fold(Condition::any(), |c, p| {
                Ok::<_, QueryError>(c.add(self.filter(p)?))
            })?,
            Filter::Compare { op, field, value } => {
                let field = self.field(field)?;
                match field.kind {
                    FieldKind::List { .. } => match op {
                        CompareOp::Eq => {
                            self.list_membership(field, std::slice::from_ref(value), false)?
                        }
                        CompareOp::Ne => {
                            self.list_membership(field, std::slice::from_ref(value), true)?
                        }
                        _ => {
                            return Err(QueryError(format!(
                                "list field `{}` takes eq, ne, in, out, contains, excludes",
                                field.name
                            )));
                        }
                    },
                    _ => {
                        let column = self.column(field.column);
                        let value = scalar(field, value)?;
                        Condition::all().add(match op {
                            CompareOp::Eq => Expr::expr(column).eq(value),
                            CompareOp::Ne => Expr::expr(column).ne(value),
                            CompareOp::Gt => Expr::expr(column).gt(value),
                            CompareOp::Ge => Expr::expr(column).gte(value),
                            CompareOp::Lt => Expr::expr(column).lt(value),
                            CompareOp::Le => Expr::expr(column).lte(value),
                        })
                    }
                }
            }
            Filter::In {
                field,
                values,
                negated,
            } => {
                let field = self.field(field)?;
                if let FieldKind::List { .. } = field.kind {
                    self.list_membership(field, values, *negated)?
                } else {
                    let values = values
                        .iter()
                        .map(|v| scalar(field, v))
                        .collect::<Result<Vec<_>, _>>()?;
                    let column = Expr::expr(self.column(field.column));
                    Condition::all().add(if *negated {
                        column.is_not_in(values)
                    } else {
                        column.is_in(values)
                    })
                }
            }
            Filter::Contains {
                field,
                value,
                negated,
            } => {
                let field = self.field(field)?;
                if !matches!(field.kind, FieldKind::List { .. }) {
                    return Err(QueryError(format!(
                        "`contains` and `excludes` apply to list fields; `{}` is not one",
                        field.name
                    )));
                }
                self.list_membership(field, std::slice::from_ref(value), *negated)?
            }
            Filter::Like { field, pattern } => {
                let field = self.field(field)?;
                if !matches!(
                    field.kind,
                    FieldKind::Text | FieldKind::LowerText | FieldKind::UpperText
                ) {
                    return Err(QueryError(format!(
                        "`like` applies to text fields; `{}` is not one",
                        field.name
                    )));
                }
                let text = pattern.as_text();
                reject_nul(field, &text)?;
                Condition::all().add(lower_like(self.column(field.column), &like_pattern(&text)))
            }
        })
    }

    fn list_membership(
        &self,
        field: &Field,
        values: &[Value],
        negated: bool,
    ) -> Result<Condition, QueryError> {
        let FieldKind::List {
            table,
            owner,
            value: value_column,
            element,
        } = field.kind
        else {
            unreachable!("list_membership is only called for list fields");
        };
        let values = values
            .iter()
            .map(|v| list_element(field, element, v))
            .collect::<Result<Vec<_>, _>>()?;
        let members = SqlQuery::select()
            .column((Alias::new(table), Alias::new(owner)))
            .from(Alias::new(table))
            .and_where(Expr::col((Alias::new(table), Alias::new(value_column))).is_in(values))
            .to_owned();
        let id = Expr::expr(self.column(self.id_column));
        Ok(Condition::all().add(if negated {
            id.not_in_subquery(members)
        } else {
            id.in_subquery(members)
        }))
    }
}

fn type_error(field: &Field, expected: &str, value: &Value) -> QueryError {
    QueryError(format!(
        "`{}` expects {expected}, got `{}`",
        field.name,
        value.as_text().chars().take(64).collect::<String>()
    ))
}

fn scalar(field: &Field, value: &Value) -> Result<sea_orm::Value, QueryError> {
    let text = value.as_text();
    reject_nul(field, &text)?;
    Ok(match field.kind {
        FieldKind::Id => match value {
            Value::Untyped(_) | Value::String(_) => Id::parse(&text)
                .map_err(|_| type_error(field, "an id of 24 hexadecimal characters", value))?
                .to_string()
                .into(),
            _ => return Err(type_error(field, "an id", value)),
        },
        FieldKind::Text | FieldKind::LowerText | FieldKind::UpperText => match value {
            Value::Untyped(_) | Value::String(_) => match field.kind {
                FieldKind::LowerText => text.to_lowercase().into(),
                FieldKind::UpperText => text.to_uppercase().into(),
                _ => text.into(),
            },
            _ => return Err(type_error(field, "text", value)),
        },
        FieldKind::Integer => match value {
            Value::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => (*n as i64).into(),
            Value::Untyped(t) => t
                .parse::<i64>()
                .map_err(|_| type_error(field, "a whole number", value))?
                .into(),
            _ => return Err(type_error(field, "a whole number", value)),
        },
        FieldKind::Number => match value {
            Value::Number(n) => (*n).into(),
            Value::Untyped(t) => t
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .ok_or_else(|| type_error(field, "a number", value))?
                .into(),
            _ => return Err(type_error(field, "a number", value)),
        },
        FieldKind::Boolean => match value {
            Value::Boolean(b) => (*b).into(),
            Value::Untyped(t) if t == "true" => true.into(),
            Value::Untyped(t) if t == "false" => false.into(),
            _ => return Err(type_error(field, "true or false", value)),
        },
        FieldKind::Millis => match value {
            Value::Epoch(ms) => (*ms).into(),
            Value::Date(d) => d.timestamp_millis().into(),
            Value::Number(n) if n.fract() == 0.0 => (*n as i64).into(),
            Value::Untyped(t) => parse_millis(t)
                .ok_or_else(|| {
                    type_error(field, "epoch milliseconds or an ISO 8601 timestamp", value)
                })?
                .into(),
            _ => return Err(type_error(field, "a timestamp", value)),
        },
        FieldKind::List { .. } => unreachable!("list fields are compared by membership"),
    })
}

fn list_element(
    field: &Field,
    element: ElementKind,
    value: &Value,
) -> Result<sea_orm::Value, QueryError> {
    let text = match value {
        Value::Untyped(t) | Value::String(t) => t.clone(),
        _ => return Err(type_error(field, "text", value)),
    };
    reject_nul(field, &text)?;
    Ok(match element {
        ElementKind::Id => Id::parse(&text)
            .map_err(|_| type_error(field, "ids of 24 hexadecimal characters", value))?
            .to_string()
            .into(),
        ElementKind::Text => text.into(),
    })
}

/// PostgreSQL text cannot hold NUL; refuse it on every database alike.
fn reject_nul(field: &Field, text: &str) -> Result<(), QueryError> {
    if text.contains('\0') {
        return Err(QueryError(format!(
            "the value for `{}` contains a NUL character",
            field.name
        )));
    }
    Ok(())
}

/// Turns an RQL `like` pattern (`*` wildcard) into SQL, escaping SQL's own wildcards.
fn like_pattern(pattern: &str) -> String {
    pattern
        .split('*')
        .map(escape_like)
        .collect::<Vec<_>>()
        .join("%")
}

/// `text` with SQL LIKE's wildcards and its escape character (`\`) escaped, so that it
/// matches only itself.
pub(super) fn escape_like(text: &str) -> String {
    let mut sql = String::with_capacity(text.len() + 2);
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            sql.push('\\');
        }
        sql.push(c);
    }
    sql
}

/// `column LIKE pattern` (an SQL pattern escaped by `\`) in any case, on every database:
/// SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
pub(super) fn lower_like(column: impl Into<Expr>, pattern: &str) -> Expr {
    Expr::expr(Func::lower(column.into())).like(LikeExpr::new(pattern.to_lowercase()).escape('\\'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::rql::parse;
    use sea_orm::sea_query::{PostgresQueryBuilder, SqliteQueryBuilder};

    const FIELDS: &[Field] = &[
        Field {
            name: "id",
            column: "id",
            kind: FieldKind::Id,
        },
        Field {
            name: "email",
            column: "email",
            kind: FieldKind::LowerText,
        },
        Field {
            name: "activation",
            column: "activation",
            kind: FieldKind::Boolean,
        },
        Field {
            name: "creation_timestamp",
            column: "creation_timestamp",
            kind: FieldKind::Millis,
        },
        Field {
            name: "gender",
            column: "gender",
            kind: FieldKind::Integer,
        },
        Field {
            name: "data.heartrate",
            column: "heartrate",
            kind: FieldKind::Number,
        },
        Field {
            name: "groupIds",
            column: "id",
            kind: FieldKind::List {
                table: "t_groups",
                owner: "t_id",
                value: "group_id",
                element: ElementKind::Id,
            },
        },
    ];
    const RESOURCE: Resource = Resource {
        table: "t",
        id_column: "id",
        fields: FIELDS,
        selectable: &["note", "data."],
    };

    fn sql(rql: &str) -> Result<String, QueryError> {
        let spec = RESOURCE.translate(&parse(rql).expect("valid rql"))?;
        let select = SqlQuery::select()
            .column(Alias::new("id"))
            .from(Alias::new("t"))
            .cond_where(spec.condition)
            .to_owned();
        // Both dialects must build; SQLite's rendering is the one asserted on.
        let _ = select.to_string(PostgresQueryBuilder);
        Ok(select.to_string(SqliteQueryBuilder))
    }

    #[test]
    fn every_comparison_operator_translates() {
        for (rql, op) in [
            ("eq", "="),
            ("ne", "<>"),
            ("gt", ">"),
            ("ge", ">="),
            ("lt", "<"),
            ("le", "<="),
        ] {
            let text = sql(&format!("{rql}(gender,1)")).unwrap();
            assert!(text.contains(&format!("\"t\".\"gender\" {op} 1")), "{text}");
        }
    }

    #[test]
    fn values_are_typed_by_field() {
        assert!(
            sql("eq(email,Ann%40Example.com)")
                .unwrap()
                .contains("'ann@example.com'")
        );
        assert!(sql("eq(activation,true)").unwrap().contains("TRUE"));
        assert!(
            sql("gt(creation_timestamp,2026-11-22T10:00:00.000Z)")
                .unwrap()
                .contains("1795341600000")
        );
        assert!(
            sql("gt(creation_timestamp,epoch:5)")
                .unwrap()
                .contains("> 5")
        );
        assert!(
            sql("ge(data.heartrate,number:60.5)")
                .unwrap()
                .contains("60.5")
        );
        assert!(
            sql("eq(gender,abc)")
                .unwrap_err()
                .0
                .contains("whole number")
        );
        assert!(
            sql("eq(activation,yes)")
                .unwrap_err()
                .0
                .contains("true or false")
        );
        assert!(sql("eq(id,xyz)").unwrap_err().0.contains("24 hexadecimal"));
        assert!(
            sql("eq(creation_timestamp,later)")
                .unwrap_err()
                .0
                .contains("timestamp")
        );
    }

    #[test]
    fn unknown_fields_are_named() {
        let err = sql("eq(password_hash,x)").unwrap_err();
        assert!(err.0.contains("unknown field `password_hash`"), "{}", err.0);
        assert!(
            RESOURCE
                .translate(&parse("sort(-secret)").unwrap())
                .is_err()
        );
        assert!(
            RESOURCE
                .translate(&parse("select(secret)").unwrap())
                .is_err()
        );
        assert!(RESOURCE.translate(&parse("select(data)").unwrap()).is_err());
        let spec = RESOURCE
            .translate(&parse("select(note,data.context.activity,email)").unwrap())
            .unwrap();
        assert_eq!(
            spec.select.unwrap(),
            ["id", "note", "data.context.activity", "email"]
        );
    }

    #[test]
    fn in_out_like_and_lists() {
        assert!(sql("in(gender,(1,2))").unwrap().contains("IN (1, 2)"));
        assert!(sql("out(gender,(1,2))").unwrap().contains("NOT IN (1, 2)"));
        let like = sql("like(email,*ann_%25*)").unwrap();
        assert!(
            like.contains("LOWER(\"t\".\"email\") LIKE '%ann\\_\\%%' ESCAPE"),
            "{like}"
        );
        let list = sql("eq(groupIds,5f3c2b1a0d9e8f7a6b5c4d3e)").unwrap();
        assert!(list.contains("\"t\".\"id\" IN (SELECT \"t_groups\".\"t_id\" FROM \"t_groups\" WHERE \"t_groups\".\"group_id\" IN ('5f3c2b1a0d9e8f7a6b5c4d3e'))"), "{list}");
        assert!(
            sql("excludes(groupIds,5f3c2b1a0d9e8f7a6b5c4d3e)")
                .unwrap()
                .contains("NOT IN (SELECT")
        );
        assert!(sql("contains(email,x)").is_err());
        assert!(sql("like(gender,1*)").is_err());
        assert!(sql("gt(groupIds,5f3c2b1a0d9e8f7a6b5c4d3e)").is_err());
    }

    #[test]
    fn and_or_nest() {
        let text = sql("(gender=1|gender=2)&activation=true").unwrap();
        assert!(
            text.contains(
                "(\"t\".\"gender\" = 1 OR \"t\".\"gender\" = 2) AND \"t\".\"activation\" = TRUE"
            ),
            "{text}"
        );
    }

    #[test]
    fn limits_are_clamped_and_defaulted() {
        let spec = RESOURCE
            .translate(&parse("limit(500,40)").unwrap())
            .unwrap();
        assert_eq!((spec.limit, spec.offset), (MAX_LIMIT, 40));
        let spec = RESOURCE.translate(&parse("").unwrap()).unwrap();
        assert_eq!(
            (spec.limit, spec.offset, spec.skip_count),
            (DEFAULT_LIMIT, 0, false)
        );
        let spec = RESOURCE
            .translate(&parse("skipCount()&select(email)").unwrap())
            .unwrap();
        assert!(spec.skip_count);
        assert_eq!(spec.select, Some(vec!["id".to_owned(), "email".to_owned()]));
    }

    #[test]
    fn sort_breaks_ties_by_id() {
        let spec = RESOURCE
            .translate(&parse("sort(-creation_timestamp)").unwrap())
            .unwrap();
        assert_eq!(spec.order.len(), 2);
        assert!(matches!(spec.order[1].1, Order::Desc));
    }
}
