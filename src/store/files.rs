//! Stored files and, for the database storage backend, their contents.

use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryTrait, Set};

use super::entities::{file, file_blob};
use super::{Reader, Scope, Service, StoreResult, Tx};
use crate::domain::id::Id;

/// A file to record.
#[derive(Debug, Clone)]
pub struct NewFile {
    /// Hash of everything the file shows; one file per key.
    pub cache_key: String,
    pub name: String,
    /// The patient the document is about.
    pub patient_id: Id,
    pub mimetype: String,
    pub size: i64,
    pub sha256: String,
    /// SHA-1 of the bytes, base64.
    pub sha1: String,
}

impl Reader {
    /// The file rendered from the input with this hash, if any and `scope` reads files.
    pub async fn file_by_cache_key(
        &self,
        scope: &dyn Scope,
        cache_key: &str,
    ) -> StoreResult<Option<file::Model>> {
        Ok(file::Entity::find()
            .filter(file::Column::CacheKey.eq(cache_key))
            .filter(scope.files())
            .one(&self.db)
            .await?)
    }

    /// The file with this id, if `scope` reads files: a capability (the token or link that
    /// names it) or an operator.
    pub async fn file_by_id(&self, scope: &dyn Scope, id: &Id) -> StoreResult<Option<file::Model>> {
        Ok(file::Entity::find_by_id(*id)
            .filter(scope.files())
            .one(&self.db)
            .await?)
    }

    /// File contents stored in the database.
    pub async fn blob(&self, cache_key: &str) -> StoreResult<Option<Vec<u8>>> {
        Ok(file_blob::Entity::find_by_id(cache_key.to_owned())
            .one(&self.db)
            .await?
            .map(|b| b.content))
    }

    /// The cache key of every recorded file, in order: what a storage must hold.
    pub async fn file_cache_keys(&self) -> StoreResult<Vec<String>> {
        use sea_orm::{QueryOrder, QuerySelect};
        Ok(file::Entity::find()
            .select_only()
            .column(file::Column::CacheKey)
            .distinct()
            .order_by_asc(file::Column::CacheKey)
            .into_tuple()
            .all(&self.db)
            .await?)
    }

    /// The keys of the file contents stored in the database.
    pub async fn blob_keys(&self) -> StoreResult<Vec<String>> {
        use sea_orm::{QueryOrder, QuerySelect};
        Ok(file_blob::Entity::find()
            .select_only()
            .column(file_blob::Column::CacheKey)
            .order_by_asc(file_blob::Column::CacheKey)
            .into_tuple()
            .all(&self.db)
            .await?)
    }
}

impl Tx {
    /// Moves file `id` to a new token version: every `readFileToken` of it made so far opens
    /// nothing from now on (the documents that point at it show the new one).
    pub async fn rotate_file_secret(&self, id: &Id) -> StoreResult<bool> {
        use sea_orm::sea_query::{Expr, ExprTrait};
        let result = file::Entity::update_many()
            .col_expr(
                file::Column::TokenVersion,
                Expr::col(file::Column::TokenVersion).add(1),
            )
            .col_expr(file::Column::LegacySecretHash, Expr::value(""))
            .filter(file::Column::Id.eq(*id))
            .exec(&self.db)
            .await?;
        Ok(result.rows_affected == 1)
    }

    /// Records a file. When another process recorded the same key first, its row wins and is
    /// returned, so every process ends up pointing at one file per key.
    pub async fn insert_file(&self, new: NewFile) -> StoreResult<file::Model> {
        // A key recorded meanwhile wins without an error, which on PostgreSQL would abort the
        // transaction: the row is inserted unless the key exists, and read only then. The
        // statement returns the row it inserted (written out here: sea-orm's own insert takes
        // a conflict that inserted nothing for an error).
        let mut insert = file::Entity::insert(file::ActiveModel {
            id: Set(Id::generate()),
            legacy_secret_hash: Set(String::new()),
            token_version: Set(0),
            cache_key: Set(new.cache_key.clone()),
            name: Set(new.name),
            patient_id: Set(Some(new.patient_id)),
            mimetype: Set(new.mimetype),
            size: Set(new.size),
            sha256: Set(new.sha256),
            sha1: Set(Some(new.sha1)),
            creation_timestamp: Set(self.now()),
        })
        .on_conflict(
            OnConflict::column(file::Column::CacheKey)
                .do_nothing()
                .to_owned(),
        )
        .into_query();
        insert.returning_all();
        let statement = self.db.get_database_backend().build(&insert);
        let inserted = file::Entity::find()
            .from_raw_sql(statement)
            .one(&self.db)
            .await?;
        match inserted {
            Some(file) => Ok(file),
            None => self
                .file_by_cache_key(&Service::Reports, &new.cache_key)
                .await?
                .ok_or(super::StoreError::NotFound),
        }
    }

    /// Deletes the contents under `cache_key` (the `database` storage backend), if any.
    pub async fn delete_blob(&self, cache_key: &str) -> StoreResult<()> {
        file_blob::Entity::delete_by_id(cache_key.to_owned())
            .exec(&self.db)
            .await?;
        Ok(())
    }

    /// Stores file contents in the database (the `database` storage backend).
    pub async fn put_blob(&self, cache_key: &str, content: Vec<u8>) -> StoreResult<()> {
        file_blob::Entity::insert(file_blob::ActiveModel {
            cache_key: Set(cache_key.to_owned()),
            content: Set(content),
        })
        .on_conflict_do_nothing_on([file_blob::Column::CacheKey])
        .exec(&self.db)
        .await?;
        Ok(())
    }
}

impl Reader {
    /// Up to `limit` of the stored files about `patient` (its measurements' and periodic
    /// reports' PDFs, every language and version kept), in id order after `after`: a page of
    /// the whole record's export. Files are otherwise read only through a capability; a
    /// whole record's are read only by the patient and administrators
    /// ([`super::Viewer::may_export`]), and only while the viewer sees the patient.
    pub async fn patient_files(
        &self,
        viewer: &super::Viewer,
        patient: &Id,
        after: Option<Id>,
        limit: u64,
    ) -> StoreResult<Vec<file::Model>> {
        use sea_orm::{QueryOrder, QuerySelect};
        viewer.may_export(patient)?;
        let mut select = file::Entity::find()
            .filter(file::Column::PatientId.eq(*patient))
            .filter(viewer.users("files", "patient_id", self.now()))
            .order_by_asc(file::Column::Id)
            .limit(limit.max(1));
        if let Some(after) = after {
            select = select.filter(file::Column::Id.gt(after));
        }
        Ok(select.all(&self.db).await?)
    }

    /// Whether a PDF of periodic report `report` is stored, in any language, about a patient
    /// `viewer` sees: an export makes the PDFs nobody has opened yet.
    pub async fn has_periodic_pdf(&self, viewer: &super::Viewer, report: &Id) -> StoreResult<bool> {
        use sea_orm::QuerySelect;
        let found = file::Entity::find()
            .select_only()
            .column(file::Column::Id)
            .filter(file::Column::Name.starts_with(periodic_file_prefix(report)))
            .filter(viewer.users("files", "patient_id", self.now()))
            .limit(1)
            .into_tuple::<Id>()
            .one(&self.db)
            .await?;
        Ok(found.is_some())
    }
}

/// How the stored PDFs of periodic report `report` are named: `tacho-report-<id>-<language>.pdf`
/// (`reports::Reports::periodic_report_pdf`), the one tie between a report and its files.
pub(super) fn periodic_file_prefix(report: &Id) -> String {
    format!("tacho-report-{report}-")
}
