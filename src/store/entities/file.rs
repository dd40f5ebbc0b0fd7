//! `files`: stored documents (PDFs), addressed publicly by `<id>-<secret>` tokens (derived by
//! `auth::file_token`, never stored) and found again by the hash of their render input
//! (`cache_key`).

use sea_orm::entity::prelude::*;

use crate::domain::id::Id;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "files")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: Id,
    /// SHA-256 (hex) of the secret of a token handed out before tokens were derived; empty for
    /// newer files and after a revocation.
    pub legacy_secret_hash: String,
    /// Moves on every revocation of the file's tokens, which changes the derived token.
    pub token_version: i32,
    pub cache_key: String,
    pub name: String,
    /// The patient the document is about; none only for files stored before it was kept
    /// whose patient could not be found from their name.
    pub patient_id: Option<Id>,
    pub mimetype: String,
    pub size: i64,
    pub sha256: String,
    /// SHA-1 of the bytes, base64 (FHIR's `Attachment.hash`); none for files stored before
    /// it was kept.
    pub sha1: Option<String>,
    pub creation_timestamp: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
