//! [`Id`] as a column type: stored as its 24-character text, read back parsed. A stored text
//! that is no id is a fault of the database (a [`DbErr`]), never a string passed along.

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, ValueType, ValueTypeErr};
use sea_orm::{ColIdx, DbErr, QueryResult, TryFromU64, TryGetError, TryGetable, Value};

use crate::domain::id::Id;

impl From<Id> for Value {
    fn from(id: Id) -> Value {
        Value::String(Some(id.to_string()))
    }
}

impl From<&Id> for Value {
    fn from(id: &Id) -> Value {
        Value::from(*id)
    }
}

impl TryGetable for Id {
    fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError> {
        let text = <String as TryGetable>::try_get_by(res, index)?;
        Id::parse(&text).map_err(|err| TryGetError::DbErr(DbErr::Type(err.to_string())))
    }
}

impl ValueType for Id {
    fn try_from(value: Value) -> Result<Self, ValueTypeErr> {
        let text = <String as ValueType>::try_from(value)?;
        Id::parse(&text).map_err(|_| ValueTypeErr)
    }

    fn type_name() -> String {
        "Id".to_owned()
    }

    fn array_type() -> ArrayType {
        ArrayType::String
    }

    fn column_type() -> ColumnType {
        ColumnType::String(sea_orm::sea_query::StringLen::N(24))
    }
}

impl Nullable for Id {
    fn null() -> Value {
        Value::String(None)
    }
}

/// Ids are made by [`Id::generate`], never by the database.
impl TryFromU64 for Id {
    fn try_from_u64(_: u64) -> Result<Self, DbErr> {
        Err(DbErr::ConvertFromU64("Id"))
    }
}
