//! The queryable fields of each resource: the RQL whitelist, with types and columns.

use crate::store::query::{Field, FieldKind, Resource};

const fn field(name: &'static str, kind: FieldKind) -> Field {
    Field {
        name,
        column: name,
        kind,
    }
}

/// `GET /users/v1`.
pub const USERS: Resource = Resource {
    table: "users",
    id_column: "id",
    fields: &[
        field("id", FieldKind::Id),
        field("email", FieldKind::LowerText),
        field("first_name", FieldKind::Text),
        field("last_name", FieldKind::Text),
        field("language", FieldKind::UpperText),
        field("activation", FieldKind::Boolean),
        field("creation_timestamp", FieldKind::Millis),
        field("update_timestamp", FieldKind::Millis),
    ],
};

/// `GET/PUT /profiles/v1`.
pub const PROFILES: Resource = Resource {
    table: "profiles",
    id_column: "id",
    fields: &[
        field("id", FieldKind::Id),
        field("country", FieldKind::UpperText),
        field("city", FieldKind::Text),
        field("physician", FieldKind::Text),
        field("gender", FieldKind::Integer),
        field("creation_timestamp", FieldKind::Millis),
        field("update_timestamp", FieldKind::Millis),
    ],
};

/// `GET /groups/v1`.
pub const GROUPS: Resource = Resource {
    table: "groups",
    id_column: "id",
    fields: &[
        field("id", FieldKind::Id),
        field("name", FieldKind::Text),
        field("creation_timestamp", FieldKind::Millis),
    ],
};
