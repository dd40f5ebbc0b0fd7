//! Domain values kept as text columns: [`Id`] as its 24 characters, a measurement [`Status`],
//! an [`EventKind`] and a report's [`Trigger`] as their wire names. Each is parsed once, when a row is read; a stored text that does not parse
//! is a fault of the database (a [`DbErr`]), never a string passed along or a default.

use sea_orm::sea_query::{ArrayType, ColumnType, Nullable, StringLen, ValueType, ValueTypeErr};
use sea_orm::{ColIdx, DbErr, QueryResult, TryFromU64, TryGetError, TryGetable, Value};

use crate::domain::id::Id;
use crate::domain::measurement::Status;
use crate::domain::notification::EventKind;
use crate::domain::periods::Trigger;

/// Implements sea-orm's column traits for `$type`, written with `$write` and read with
/// `$parse` (text → `Option<$type>`).
macro_rules! text_column {
    ($type:ty, $name:literal, $len:expr, write: $write:expr, parse: $parse:expr) => {
        impl From<$type> for Value {
            fn from(value: $type) -> Value {
                Value::String(Some($write(&value)))
            }
        }

        impl From<&$type> for Value {
            fn from(value: &$type) -> Value {
                Value::String(Some($write(value)))
            }
        }

        impl TryGetable for $type {
            fn try_get_by<I: ColIdx>(res: &QueryResult, index: I) -> Result<Self, TryGetError> {
                let text = <String as TryGetable>::try_get_by(res, index)?;
                $parse(&text).ok_or_else(|| {
                    TryGetError::DbErr(DbErr::Type(format!("a stored {} is unknown", $name)))
                })
            }
        }

        impl ValueType for $type {
            fn try_from(value: Value) -> Result<Self, ValueTypeErr> {
                let text = <String as ValueType>::try_from(value)?;
                $parse(&text).ok_or(ValueTypeErr)
            }

            fn type_name() -> String {
                $name.to_owned()
            }

            fn array_type() -> ArrayType {
                ArrayType::String
            }

            fn column_type() -> ColumnType {
                ColumnType::String($len)
            }
        }

        impl Nullable for $type {
            fn null() -> Value {
                Value::String(None)
            }
        }
    };
}

text_column!(Id, "id", StringLen::N(24),
    write: |id: &Id| id.to_string(),
    parse: |text: &str| Id::parse(text).ok());

text_column!(Status, "measurement status", StringLen::None,
    write: |status: &Status| status.as_str().to_owned(),
    parse: Status::parse);

text_column!(EventKind, "event kind", StringLen::N(40),
    write: |kind: &EventKind| kind.as_str().to_owned(),
    parse: EventKind::parse);

text_column!(Trigger, "report trigger", StringLen::None,
    write: |trigger: &Trigger| trigger.as_str().to_owned(),
    parse: Trigger::parse);

/// Ids are made by [`Id::generate`], never by the database.
impl TryFromU64 for Id {
    fn try_from_u64(_: u64) -> Result<Self, DbErr> {
        Err(DbErr::ConvertFromU64("Id"))
    }
}
