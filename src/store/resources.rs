//! The queryable fields of each resource: the RQL whitelist, with types and columns.

use super::query::{ElementKind, Field, FieldKind, Resource};

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
    selectable: &[
        "phone_number",
        "time_zone",
        "roles",
        "patient_enlistments",
        "staff_enlistments",
        "failed_count",
        "last_failed_timestamp",
        "profile_image",
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
    selectable: &[
        "region",
        "address_line1",
        "address_line2",
        "postal_code",
        "weight",
        "length",
        "birthday",
        "comorbidities",
        "smoker",
        "activity",
        "service_info",
        "service_info.",
        "impediments",
        "custom_fields",
        "custom_fields.",
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
    selectable: &["description", "update_timestamp"],
};

const fn column(name: &'static str, column: &'static str, kind: FieldKind) -> Field {
    Field { name, column, kind }
}

const fn list(
    name: &'static str,
    table: &'static str,
    value: &'static str,
    element: ElementKind,
) -> Field {
    Field {
        name,
        column: "id",
        kind: FieldKind::List {
            table,
            owner: "measurement_id",
            value,
            element,
        },
    }
}

/// `GET /data/v1/measurements/documents`.
pub const MEASUREMENTS: Resource = Resource {
    table: "measurements",
    id_column: "id",
    fields: &[
        field("id", FieldKind::Id),
        column("creatorId", "creator_id", FieldKind::Id),
        list("userIds", "measurement_users", "user_id", ElementKind::Id),
        list(
            "groupIds",
            "measurement_groups",
            "group_id",
            ElementKind::Id,
        ),
        field("status", FieldKind::Text),
        column("creationTimestamp", "creation_timestamp", FieldKind::Millis),
        column("updateTimestamp", "update_timestamp", FieldKind::Millis),
        column(
            "statusChangedTimestamp",
            "status_changed_timestamp",
            FieldKind::Millis,
        ),
        column(
            "data.measurement_timestamp",
            "measurement_timestamp",
            FieldKind::Millis,
        ),
        column("data.heartrate", "heartrate", FieldKind::Number),
        column("data.indicator", "indicator", FieldKind::Text),
        column("data.mostSevereLabel.key", "result", FieldKind::Text),
        list("data.tags", "measurement_tags", "tag", ElementKind::Text),
    ],
    selectable: &["data", "data."],
};

/// `GET /data/v1/measurement-reports/documents`.
pub const MEASUREMENT_REPORTS: Resource = Resource {
    table: "measurement_reports",
    id_column: "id",
    fields: &[
        field("id", FieldKind::Id),
        column("creatorId", "creator_id", FieldKind::Id),
        field("status", FieldKind::Text),
        column("data.measurementId", "measurement_id", FieldKind::Id),
        column("data.language", "language", FieldKind::LowerText),
        column("creationTimestamp", "creation_timestamp", FieldKind::Millis),
        column("updateTimestamp", "update_timestamp", FieldKind::Millis),
    ],
    selectable: &[
        "userIds",
        "groupIds",
        "statusChangedTimestamp",
        "data",
        "data.",
    ],
};

/// `GET /reports/v1`.
pub const REPORTS: Resource = Resource {
    table: "reports",
    id_column: "id",
    fields: &[
        field("id", FieldKind::Id),
        field("user_id", FieldKind::Id),
        field("group_id", FieldKind::Id),
        field("trigger", FieldKind::Text),
        field("status", FieldKind::Text),
        field("creation_timestamp", FieldKind::Millis),
        field("period_start_timestamp", FieldKind::Millis),
        field("period_end_timestamp", FieldKind::Millis),
    ],
    selectable: &["update_timestamp", "data", "data."],
};

/// `GET /notifications/v1` (the caller's own).
pub const NOTIFICATIONS: Resource = Resource {
    table: "notifications",
    id_column: "id",
    fields: &[
        field("id", FieldKind::Id),
        field("kind", FieldKind::Text),
        field("patient_id", FieldKind::Id),
        field("measurement_id", FieldKind::Id),
        field("report_id", FieldKind::Id),
        field("read", FieldKind::Boolean),
        column("read_timestamp", "read_at", FieldKind::Millis),
        field("creation_timestamp", FieldKind::Millis),
    ],
    selectable: &["event_id", "detail"],
};
