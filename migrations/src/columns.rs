//! Column and index builders shared by the migrations.

use sea_orm_migration::prelude::*;

/// A 24-character object id primary key. `varchar`, not `character`: ids are bound as text,
/// and PostgreSQL compares `character` with text by casting the column, past its index
/// (`m20261128_000160_ids_as_varchar`).
pub fn id<T: IntoIden>(name: T) -> ColumnDef {
    ColumnDef::new(name)
        .string_len(24)
        .not_null()
        .primary_key()
        .to_owned()
}

/// A required reference to another object's id.
pub fn reference<T: IntoIden>(name: T) -> ColumnDef {
    ColumnDef::new(name).string_len(24).not_null().to_owned()
}

/// A required timestamp in epoch milliseconds.
pub fn millis<T: IntoIden>(name: T) -> ColumnDef {
    ColumnDef::new(name).big_integer().not_null().to_owned()
}

/// An index over `columns` of `table`.
pub fn index(
    table: impl IntoIden,
    name: &str,
    columns: &[&str],
    unique: bool,
) -> IndexCreateStatement {
    let mut statement = Index::create();
    statement.name(name).table(table);
    for column in columns {
        statement.col(Alias::new(*column));
    }
    if unique {
        statement.unique();
    }
    statement.to_owned()
}
